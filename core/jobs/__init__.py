"""Jobs: the job service every front end submits requests to (service), the only writer of
job state: it validates a request once, stores the job, runs the research core (or queues
the job for a worker: queue, queue_worker), turns the research's stage events into stored
events and row updates, stores the result or the failure, and delivers the answer durably to
chat platforms with best-effort progress (delivery)."""
