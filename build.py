"""Build the static calendar site: `python build.py [--content DIR | --sample] [--out DIR]
[--templates DIR] [--base-url URL] [--watch] [--keep-going] [--force]`."""

from calendar_app.site.command import exit_now, main

if __name__ == "__main__":
    exit_now(main())
