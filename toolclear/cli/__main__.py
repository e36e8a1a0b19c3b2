"""``python -m toolclear.cli``."""

from . import main_entry

main_entry()
