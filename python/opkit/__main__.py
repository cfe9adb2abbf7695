"""`python -m opkit ...` is `opkit ...`."""
from .cli import main

main()
