"""The HTTP interface: the Flask app, its views, /doc, guards."""
