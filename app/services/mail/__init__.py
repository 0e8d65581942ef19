"""The e-mail channel: intake addresses, signed reply addresses, parsing, intake and the outbox."""
