"""Research as a function of its request: `Researcher.run(request, sink)` (researcher) returns
the result, what the research did and its metrics, reporting stage events to `sink`; it
creates no job and writes no job row.

    researcher        intake -> answer cache -> engine (or a revision, for `improve`) -> cache
    engine            read -> plan -> rounds of [search -> weigh -> reflect] -> write -> check
                      -> grade, over one strategy per step
    heuristic_steps   the steps without a model
    model_steps       the steps through a model, each falling back to the heuristic one
    model_tasks       each model call as a function; model_replies: the schemas they return
    intake, planning, search    reading the question, planning queries, searching sources
    record            a run's trace, metrics and stage events
    tracing           each round's searches and totals in the trace; the progress lines
"""
