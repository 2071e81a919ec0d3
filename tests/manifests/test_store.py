"""Manifest files: validation errors name the field, pre-registration, trailers."""
from __future__ import annotations

import json

import pytest

from evoharness.errors import EvoError, ValidationFailed
from evoharness.manifests.schema import IterationManifest, Prediction, json_schema
from evoharness.manifests.store import load_manifest, load_manifests, save_manifest, trailers_for

from .builders import change, manifest

TASKS = {"a", "b", "c"}


def saved(tmp_path):
    m = manifest(3, change("A", fixes={"a": 0.7}, regs={"b": 0.1}), change("B", fixes={"c": 0.4}))
    return m, save_manifest(tmp_path / "manifests" / "iter-003.json", m)


def test_round_trip_and_saving_again_is_a_no_op(tmp_path):
    m, path = saved(tmp_path)
    written = path.stat().st_mtime_ns
    assert load_manifest(path, TASKS) == m
    save_manifest(path, m)  # resume: same manifest again is a no-op
    assert path.stat().st_mtime_ns == written
    assert load_manifests(tmp_path / "manifests") == [m]


def test_a_registered_prediction_cannot_be_rewritten(tmp_path):
    _, path = saved(tmp_path)
    before = path.read_text()
    with pytest.raises(EvoError, match="already registered"):
        save_manifest(path, manifest(3, change("A", fixes={"a": 0.99})))
    assert path.read_text() == before


def test_bad_json_names_file_line_and_column(tmp_path):
    path = tmp_path / "manifests" / "iter-001.json"
    path.parent.mkdir()
    path.write_text('{\n  "run_id": "r",\n  oops\n}')
    with pytest.raises(EvoError, match=r"iter-001.json: not valid JSON at line 3 column 3"):
        load_manifest(path, TASKS)


def _edited(tmp_path, edit) -> str:
    _, path = saved(tmp_path)
    raw = json.loads(path.read_text())
    edit(raw)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(raw))
    with pytest.raises(ValidationFailed) as caught:
        load_manifest(bad, TASKS)
    return str(caught.value)


def test_unknown_task_names_the_field(tmp_path):
    def edit(raw):
        raw["changes"][1]["predicted_fixes"].append({"task_id": "foo", "probability": 0.5})
    assert "bad.json: changes[1].predicted_fixes[1].task_id: unknown task 'foo'" in _edited(tmp_path, edit)


def test_missing_field_names_the_field(tmp_path):
    def edit(raw):
        del raw["changes"][0]["root_cause"]
    assert "changes[0].root_cause: Field required" in _edited(tmp_path, edit)


def test_out_of_range_probability_names_the_field(tmp_path):
    def edit(raw):
        raw["changes"][0]["predicted_regressions"][0]["probability"] = 1.5
    assert "changes[0].predicted_regressions[0].probability" in _edited(tmp_path, edit)


@pytest.mark.parametrize("malformed", [
    {"run_id": None},  # a required field missing
    {"changes": [change("A", fixes={"a": 0.7}).model_copy(update={"predicted_fixes": [
        Prediction.model_construct(task_id="a", probability=1.5)]})]},  # out of range
], ids=["no run_id", "probability 1.5"])
def test_malformed_manifest_cannot_replace_the_registered_one(tmp_path, malformed):
    """Saving a manifest that never passed validation over the registered one (same iteration,
    same path) is refused, and the registered file keeps every byte."""
    registered, path = saved(tmp_path)
    before = path.read_bytes()
    bad = IterationManifest.model_construct(**{**dict(registered), **malformed})
    with pytest.raises(EvoError):
        save_manifest(path, bad)
    assert path.read_bytes() == before
    assert load_manifest(path, TASKS) == registered


def test_same_task_predicted_twice_is_refused():
    with pytest.raises(ValueError, match="more than once"):
        change("A", fixes={"a": 0.5}, regs={"a": 0.2})


def test_empty_iteration_needs_a_reason():
    with pytest.raises(ValueError, match="no_change_reason"):
        IterationManifest.model_validate(
            {"run_id": "r", "iteration": 1, "harness_commit_before": "abcdef12", "changes": []})


def test_trailers_carry_the_prediction():
    assert trailers_for(change("A", fixes={"a": 0.7, "b": 0.25})) == {
        "Change-Id": "A", "Component": "system_prompt",
        "Predicted-Fixes": "a:0.70, b:0.25", "Predicted-Regressions": "none"}


def test_json_schema_describes_the_manifest():
    schema = json_schema()
    assert "changes" in schema["properties"]
    assert "ChangeManifestEntry" in schema["$defs"]
