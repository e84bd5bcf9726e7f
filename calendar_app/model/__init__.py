"""The records' model: resource descriptions, field types, values, dates, recurrence rules. Imports nothing else of the package."""
