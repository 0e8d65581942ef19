"""The e-mail surfaces: the SMTP receiver and the outbox worker's place in the web server."""
