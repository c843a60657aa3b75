"""The Slack front end: the bolt app (mentions, DMs, /research, reactions), delivery of answers
to threads, and Block Kit rendering (pure functions)."""
