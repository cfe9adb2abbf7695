"""opkit's version (pyproject.toml [project] version); stamps and cache keys carry it."""
__version__ = "0.1.0"
