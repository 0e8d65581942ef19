"""Tests of the e-mail channel: intake, outbound replies, answers, the HTTP endpoint."""
