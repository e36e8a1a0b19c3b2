"""``python -m toolclear`` runs the CLI."""

import sys

try:
    from .cli import main
except KeyboardInterrupt:  # Ctrl-C while starting up: nothing has been read or written yet
    print("toolclear: interrupted; nothing was written", file=sys.stderr)
    sys.exit(130)

sys.exit(main())
