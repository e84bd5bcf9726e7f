"""Records coming in from elsewhere (a plugin site, iCalendar, CSV) and going out again."""
