"""Repositories: every SQL statement of Earful, one module per aggregate.

Services call these functions and never write SQL; handlers never call them. Each module owns
the statements of its aggregate and every difference between SQLite and PostgreSQL they need,
written in the one idiom of :mod:`app.repositories.sql`. Reads return typed rows (dataclasses
named ``...Row``), never ORM objects; writes run only inside a transaction opened by a service
(:func:`app.db.transactional`). The ORM's models remain the schema and the migrations.
"""
