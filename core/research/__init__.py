"""Research: the pipeline that turns a question into a graded, cited answer (pipeline), the
model-driven loop it runs when a model is configured (analyst), and its steps: reading the
question (intake), planning searches (planning), searching sources side by side (search),
and each job's progress bookkeeping (run)."""
