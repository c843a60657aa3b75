"""Slack front end. So far: Block Kit rendering (pure functions); the bolt app arrives next."""
