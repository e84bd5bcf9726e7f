"""An events calendar that lives in git.

Importing the package loads nothing: the Flask app is `calendar_app.http.app.create_app`, so
the editorial commands and the builder never pay for the server's libraries."""
