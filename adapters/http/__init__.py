"""The HTTP front end: the JSON API over the job service, its Server-Sent Events, the
server-rendered answer page per job (app), the page's templates and assets (page), and one
shared event follower per job (feeds)."""
