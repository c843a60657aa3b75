"""The Discord front end: the discord.py client (/research, thread follow-ups, reactions),
delivery of answers to threads, and embed rendering (pure functions)."""
