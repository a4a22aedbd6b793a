#!/usr/bin/env python
"""Django's command-line utility; the same commands as the `memoryweb` console script."""

from memoryweb.cli import main

if __name__ == "__main__":
    main()
