"""Build the static calendar site: `python build.py [--content DIR] [--out DIR]
[--templates DIR] [--base-url URL] [--watch] [--strict]`."""

import sys

from calendar_app.site.command import main

if __name__ == "__main__":
    sys.exit(main())
