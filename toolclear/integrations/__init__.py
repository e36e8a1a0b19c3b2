"""Run a tuned toolclear policy live inside an agent framework (each imported lazily)."""
