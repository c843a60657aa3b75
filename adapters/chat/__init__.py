"""What every chat front end shares, whatever the platform: the desk (job service, thread
memory, limits, dedupe), question limits (limits), redelivery dedupe (dedupe) and text
trimming (text)."""
