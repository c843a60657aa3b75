"""The Discord front end."""
