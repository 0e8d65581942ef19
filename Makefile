# Earful: `make run` serves on SQLite, `make test` runs every test. Both set up what they need.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
HTMX := app/static/vendor/htmx.min.js
HTMX_SSE := app/static/vendor/hx-sse.min.js
SWAGGER := app/static/vendor/swagger-ui-bundle.js

.PHONY: setup run test lint format migration messages clean browser screenshots bench bench-ab bench-instructions wrk

setup: $(STAMP) $(HTMX) $(HTMX_SSE) $(SWAGGER)

# htmx comes from its npm package, pinned in package-lock.json; the copy is not committed.
$(HTMX): package-lock.json
	npm ci --no-audit --no-fund --loglevel=error
	mkdir -p app/static/vendor
	cp node_modules/htmx.org/dist/htmx.min.js $@

# htmx 4's server-sent events extension ships inside the htmx.org package (the npm package
# htmx-ext-sse is for htmx 2): the live inbox and thread pages load it.
$(HTMX_SSE): $(HTMX)
	cp node_modules/htmx.org/dist/ext/hx-sse.min.js $@

# The API reference page (/docs) shows /openapi.json with Swagger UI, from its npm package too.
$(SWAGGER): $(HTMX)
	cp node_modules/swagger-ui-dist/swagger-ui-bundle.js node_modules/swagger-ui-dist/swagger-ui.css app/static/vendor/

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e ".[dev]"
	touch $@

run: setup
	$(BIN)/earful serve

# Browser tests drive Debian's Chromium (Playwright never downloads a browser of its own here).
browser:
	@command -v chromium >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; }

# Tests run in two processes (pytest-xdist), a test file to each at a time: each has its own
# databases (tests/conftest.py names them at random); a third process does not help on two cores
# (13:39 against 12:54 on 2026-12-07). The slowest tests are listed at the end of each run.
TEST_PROCESSES ?= 2

test: setup lint browser
	@if [ -z "$$EARFUL_TEST_POSTGRES_URL" ]; then \
	  echo "NOTE: EARFUL_TEST_POSTGRES_URL is not set, so the PostgreSQL half of the suite is SKIPPED."; \
	  echo "      Run 'EARFUL_TEST_POSTGRES_URL=postgres://postgres@127.0.0.1:5432/postgres make test' for both databases."; \
	fi
	$(BIN)/pytest -n $(TEST_PROCESSES) --dist loadfile --durations=25

# PNGs of the inbox, a thread and the statistics page, shown in the README.
screenshots: setup browser
	$(BIN)/python scripts/screenshots.py

# Benchmarks on 127.0.0.1 with wrk (Debian package), written to benchmarks/results.md.
# BENCH_THREADS (default 1000000; 10000000 measures 1M and 10M in one run), BENCH_DATA_DIR (keep
# and reuse the seeded data), BENCH_DURATION (10s); EARFUL_BENCH_POSTGRES_URL adds PostgreSQL.
wrk:
	@command -v wrk >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk; }

bench: setup wrk
	$(BIN)/python -m benchmarks.run

# The code at BEFORE (a commit) against this checkout, in turns on the same seeded data:
# make bench-ab BEFORE=c706096 (BENCH_ROUNDS, BENCH_AB_ONLY; see benchmarks/ab.py).
bench-ab: setup wrk
	@test -n "$(BEFORE)" || { echo "make bench-ab BEFORE=<commit>"; exit 2; }
	rm -rf .bench-before && git worktree add --detach .bench-before $(BEFORE)
	mkdir -p .bench-before/app/static/vendor && cp app/static/vendor/* .bench-before/app/static/vendor/
	$(BIN)/python -m benchmarks.ab .bench-before $(BEFORE); status=$$?; \
	  git worktree remove --force .bench-before; exit $$status

# Instructions per request counted by callgrind (noise-free, unlike CPU time on a shared machine):
# make bench-instructions [BEFORE=<commit>] (BENCH_THREADS, BENCH_REQUESTS; benchmarks/instructions.py).
bench-instructions: setup
	@command -v valgrind >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq valgrind; }
	@if [ -n "$(BEFORE)" ]; then \
	  rm -rf .bench-before && git worktree add --detach .bench-before $(BEFORE) && \
	  mkdir -p .bench-before/app/static/vendor && cp app/static/vendor/* .bench-before/app/static/vendor/ && \
	  $(BIN)/python -m benchmarks.instructions .bench-before $(BEFORE); status=$$?; \
	  git worktree remove --force .bench-before; exit $$status; \
	else $(BIN)/python -m benchmarks.instructions; fi

lint: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

format: setup
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

# Write a new migration from the model changes: make migration NAME=add_something
migration: setup
	EARFUL_DATA_DIR=$$(mktemp -d) $(BIN)/tortoise -c app.db.TORTOISE_ORM makemigrations -n $(NAME)

# Refresh the message catalogs after adding or changing a marked text (N_ in the code).
messages: setup
	$(BIN)/pybabel extract -F babel.cfg -k N_ --no-location --omit-header -o app/translations/messages.pot .
	$(BIN)/pybabel update -i app/translations/messages.pot -d app/translations

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache
