"""Jobs: the job service every front end submits questions to (core.jobs.service), the
stored progress events of each job (core.store.events), and durable delivery of answers to
chat platforms with best-effort progress (core.jobs.delivery)."""
