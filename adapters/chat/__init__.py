"""What every chat front end shares, whatever the platform: its services (services: the job
service, thread memory, limits, dedupe, ratings), question limits (limits), redelivery
dedupe (dedupe) and text trimming (text)."""
