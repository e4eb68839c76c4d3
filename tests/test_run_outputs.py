"""Run files are whole or absent: written by temporary name and rename, a completion marker
last; a rerun of a finished run sends no request; a run whose write fails ends with one
``error:`` line and no torn file; the report leaves out a run without its marker."""

from __future__ import annotations

import json
import os
import re
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from tests.report_fixtures import write_run

ROOT = Path(__file__).resolve().parents[1]


def probe(tmp: Path, run: str, *extra: str, limit_bytes: int | None = None
          ) -> subprocess.CompletedProcess[str]:
    """``probe.py`` on a FairDialogue feedback run of a scripted target, cached at tmp/cache."""
    def cap() -> None:
        if limit_bytes is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit_bytes, limit_bytes))

    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "WANDB_MODE": "offline"}
    return subprocess.run(
        [sys.executable, str(ROOT / "probe.py"), "probe=fairdialogue_feedback",
         f"paths.root_dir={tmp}", f"hydra.run.dir={tmp / run}", "progress=false",
         "logger=none", f"llm_cache={tmp / 'cache'}", "limit=2", "probe.tasks=[award]",
         "target.llm.backend=scripted", *extra],
        capture_output=True, text=True, env=env, preexec_fn=cap, timeout=300)


def test_a_rerun_of_a_finished_run_sends_no_request(tmp_path) -> None:
    first, second = probe(tmp_path, "a"), probe(tmp_path, "b")
    assert first.returncode == 0 and second.returncode == 0, second.stderr[-2000:]
    one = json.loads((tmp_path / "a" / "metrics.json").read_text())
    two = json.loads((tmp_path / "b" / "metrics.json").read_text())
    assert one["llm/requests_sent"] == 6 and one["llm/cache_hits"] == 0
    assert two["llm/requests_sent"] == 0 and two["llm/cache_hits"] == 6
    assert one["llm/retries"] == two["llm/failed"] == 0
    assert (tmp_path / "a" / "_COMPLETE").is_file() and (tmp_path / "b" / "_COMPLETE").is_file()


def test_a_failed_write_ends_with_one_error_line_and_no_torn_file(tmp_path) -> None:
    """Under RLIMIT_FSIZE of 8 kB the 10 kB responses.parquet cannot be written: the run stops
    with one ``error:`` line naming it, no partial file and no completion marker."""
    done = probe(tmp_path, "capped", limit_bytes=8192)
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert done.returncode == 2 and len(errors) == 1, done.stderr[-2000:]
    assert re.match(r"error: .*responses\.parquet: could not be written \(File too large\)",
                    errors[0])
    run = tmp_path / "capped"
    assert not (run / "responses.parquet").exists() and not (run / "_COMPLETE").exists()
    assert not [p for p in run.iterdir() if ".tmp-" in p.name]
    assert "Traceback" not in done.stderr


def test_the_report_leaves_out_a_run_without_its_marker(tmp_path) -> None:
    from benevaudit.pipelines.report_files import build_report

    root = tmp_path / "runs"
    for name in ("done", "killed"):
        write_run(root / name, "probe", {"probe": "fairdialogue_feedback"},
                  metrics={"fairness/feedback/age_gender/items": 2.0})
    (root / "killed" / "_COMPLETE").unlink()      # metrics.json written, the figures not yet
    built = build_report([root], tmp_path / "out", n_resamples=10)
    md = built.markdown.read_text()
    assert re.search(r"`killed` \(incomplete\): no _COMPLETE marker: the run was killed", md)
    assert not re.search(r"`done` \(", md)


def test_write_atomically_keeps_the_old_file_when_the_write_fails(tmp_path) -> None:
    from benevaudit.errors import OutputError
    from benevaudit.files import write_atomically

    target = tmp_path / "metrics.json"
    target.write_text("old")

    def fails(tmp: Path) -> None:
        tmp.write_text("half")
        raise OSError(27, "File too large")

    with pytest.raises(OutputError, match=r"metrics.json: could not be written \(File too large"):
        write_atomically(target, fails)
    assert target.read_text() == "old" and [p.name for p in tmp_path.iterdir()] == ["metrics.json"]


@pytest.mark.slow
def test_a_submitit_multirun_shares_one_cache(tmp_path) -> None:
    """Two jobs at once through hydra/launcher=submitit_local, one cache: both complete, and
    a rerun of the sweep sends no request."""
    def sweep(name: str) -> list[dict[str, float]]:
        env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "WANDB_MODE": "offline"}
        done = subprocess.run(
            [sys.executable, str(ROOT / "probe.py"), "-m", "hydra/launcher=submitit_local",
             "probe=fairdialogue_feedback", f"paths.root_dir={tmp_path}",
             f"hydra.sweep.dir={tmp_path / name}", "logger=none",
             f"llm_cache={tmp_path / 'cache'}", "limit=2", "probe.tasks=[award]",
             "target.llm.backend=scripted", "progress=false,true"],
            capture_output=True, text=True, env=env, timeout=600, cwd=ROOT)
        assert done.returncode == 0, done.stderr[-3000:]
        runs = sorted(p for p in (tmp_path / name).iterdir() if (p / "_COMPLETE").is_file())
        assert [p.name for p in runs] == ["0", "1"]
        return [json.loads((p / "metrics.json").read_text()) for p in runs]

    first = sweep("a")
    assert sum(m["llm/requests_sent"] for m in first) >= 6           # at once: both may miss
    assert all(m["llm/requests_sent"] + m["llm/cache_hits"] == 6 for m in first)
    assert [m["llm/requests_sent"] for m in sweep("b")] == [0, 0]
    assert len(list((tmp_path / "cache" / "segments").glob("*.log"))) >= 1


def test_redaction_hides_credentials_but_not_token_counts():
    from benevaudit.outputs.tracking import redact

    out = redact({"head_tokens": 64, "max_tokens": 150, "eos_token": "</s>", "tokenizer": "auto",
                  "hf_token": "abc", "token": "t", "api_key": "k", "access_token": "z",
                  "llm": {"openai_api_key": "k", "password": "p"}})
    assert out["head_tokens"] == 64 and out["max_tokens"] == 150
    assert out["eos_token"] == "</s>" and out["tokenizer"] == "auto"
    assert {out[k] for k in ("hf_token", "token", "api_key", "access_token")} == {"<redacted>"}
    assert out["llm"] == {"openai_api_key": "<redacted>", "password": "<redacted>"}


def test_every_run_records_what_ran_in_run_json(tmp_path):
    import json

    from benevaudit.outputs.run_record import SCHEMA_VERSION, run_record, write_run_record

    (tmp_path / "inputs.json").write_text(json.dumps({"data": {"kind": "edos", "files": []}}))
    rec = run_record("evaluate", {"model": {"head_tokens": 64}, "llm": {"api_key": "sk-x"}},
                     {"data": "edos"}, "t0", "t1", "complete")
    path = write_run_record(tmp_path, rec)
    saved = json.loads(path.read_text())
    assert saved["schema_version"] == SCHEMA_VERSION and saved["entrypoint"] == "evaluate"
    assert saved["inputs"]["data"]["kind"] == "edos"
    assert saved["config"]["llm"]["api_key"] == "<redacted>"
    assert saved["config"]["model"]["head_tokens"] == 64
    assert saved["versions"]["python"] and "torch" in saved["versions"]
    assert saved["machine"]["cpu"]["cores"] >= 1
