"""Front ends, thin: parse a platform's event into a request, submit it to the job service,
render the result. Slack, Discord, HTTP and the terminal never import each other; what the
chat front ends share is in adapters.chat."""
