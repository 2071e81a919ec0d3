import json
from pathlib import Path

TARGET = Path("/app/report.json")
EXPECTED = {'customers': [{'customer_id': 'C2', 'name': 'Globex', 'orders': 3, 'total': 400.5}, {'customer_id': 'C1', 'name': 'Acme Corp', 'orders': 3, 'total': 350.6}, {'customer_id': 'C3', 'name': 'Initech', 'orders': 1, 'total': 75.25}, {'customer_id': 'C4', 'name': 'Umbrella', 'orders': 1, 'total': 12.0}, {'customer_id': 'C5', 'name': 'Hooli', 'orders': 0, 'total': 0.0}], 'grand_total': 838.35}


def load():
    assert TARGET.is_file(), "/app/report.json does not exist"
    return json.loads(TARGET.read_text())


def test_keys():
    data = load()
    assert isinstance(data, dict) and set(data) == {"customers", "grand_total"}, (
        f"report.json must be an object with keys customers and grand_total, found {list(data)}")


def test_customers():
    got = load()["customers"]
    assert [c.get("customer_id") for c in got] == [c["customer_id"] for c in EXPECTED["customers"]], (
        f"customer order is {[c.get('customer_id') for c in got]}, "
        f"expected {[c['customer_id'] for c in EXPECTED['customers']]}")
    for g, w in zip(got, EXPECTED["customers"]):
        assert set(g) == set(w), f"keys of {g} should be {sorted(w)}"
        assert g["name"] == w["name"] and g["orders"] == w["orders"], f"{g} should be {w}"
        assert abs(g["total"] - w["total"]) < 0.005, f"total of {g['customer_id']} is {g['total']}, expected {w['total']}"


def test_grand_total():
    got = load()["grand_total"]
    assert abs(got - EXPECTED["grand_total"]) < 0.005, f"grand_total is {got}, expected {EXPECTED['grand_total']}"
