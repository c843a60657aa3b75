"""Jobs: the job service every front end submits requests to, and the only writer of job
state.

    reading         JobReader: a job, its events, its delivery, its answer once ended
    service         JobService (a JobReader that writes): validates a request once, stores
                    the job, runs the research core or queues the job, turns the research's
                    stage events into stored events and row updates, stores the result or
                    the failure, cancels, and delivers
    delivery        durable delivery of answers to chat platforms, best-effort progress
    queue           the SAQ queue in Redis; queue_worker: a worker process's loop
"""
