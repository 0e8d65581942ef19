"""The domain layer: every rule of Earful, called by the APIs, the web app and the CLI alike.

Modules here never import Quart; they take the acting user explicitly and raise the errors of
:mod:`app.errors`.
"""
