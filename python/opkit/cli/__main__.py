"""`python -m opkit.cli ...` is `opkit ...`."""
from . import main

main()
