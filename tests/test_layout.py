"""The tests mirror the services: every module of app/services has its test module in
tests/services, testing its rules against a real database (a package, such as sentiment/, has
one test module for the package)."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SERVICES = ROOT / "app" / "services"
TESTS = ROOT / "tests" / "services"


def expected_test_modules() -> set[Path]:
    expected = set()
    for module in SERVICES.rglob("*.py"):
        relative = module.relative_to(SERVICES)
        if module.name == "__init__.py":
            continue
        package = relative.parent
        if package != Path(".") and not (TESTS / package).is_dir():
            expected.add(Path(f"test_{package.name}.py"))  # a package tested as one
        else:
            expected.add(package / f"test_{module.stem}.py")
    return expected


def test_every_service_module_has_its_test_module():
    missing = sorted(str(path) for path in expected_test_modules() if not (TESTS / path).is_file())

    assert missing == [], f"service modules without a test module in tests/services: {missing}"
