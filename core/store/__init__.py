"""Storage: every table and the stores that read and write it, returning typed models.

    database        the tables and `open_database` (SQLite by default, PostgreSQL by URL)
    jobs            one row a research job: its request, trace, result or failure, metrics
    events          each job's numbered progress events, replayable and followed live
    deliveries      where each job's answer goes and which delivery steps are done
    conversations   which chat message answered which job, for follow-ups in a thread
    feedback        readers' ratings of answers
    access          API keys (hashed) and the key that signs answer-page links

It imports nothing above the data modules (core.models, core.errors, core.redact). Only the
job service (core.jobs) writes job rows, events and deliveries.
"""
