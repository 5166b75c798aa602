"""A cursor function's JSON Schemas: compiled at parse time, matched by RE2, failures said without the document."""
