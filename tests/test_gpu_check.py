"""benchmarks/gpu_check.py (issue 34): the payload's wheel logic, the install and import checks, the time boxes, and a
small run of the whole check on a tiny payload built here — nothing downloaded (the wheel is a test package made by
the test, named as such)."""

from __future__ import annotations

import base64
import hashlib
import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT

sys.path.insert(0, str(REPO_ROOT / "benchmarks"))
import gpu_check


def make_wheel(folder: Path, name: str = "gpucheck_probe", requires: tuple[str, ...] = ("numpy",)) -> Path:
    """TEST PACKAGE: a minimal pure wheel (``VALUE = 42``, a ``tests/`` data folder, the given requirements)."""
    files = {f"{name}/__init__.py": b"VALUE = 42\n", f"{name}/tests/data.txt": b"x" * 1000}
    dist = f"{name}-0.1.dist-info"
    meta = "Metadata-Version: 2.1\nName: " + name.replace("_", "-") + "\nVersion: 0.1\n" + "".join(
        f"Requires-Dist: {r}\n" for r in requires) + "\nA test package.\n"
    files[f"{dist}/METADATA"] = meta.encode()
    files[f"{dist}/WHEEL"] = b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"

    def digest(data: bytes) -> str:
        return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()

    record = "".join(f"{n},{digest(d)},{len(d)}\n" for n, d in files.items()) + f"{dist}/RECORD,,\n"
    files[f"{dist}/RECORD"] = record.encode()
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}-0.1-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as zf:
        for n, d in files.items():
            zf.writestr(n, d)
    return path


def test_requirements_apply_by_the_targets_markers():
    assert gpu_check.needed("numpy>=1.24")
    assert gpu_check.needed('tomli; python_version < "3.13"')  # the target is 3.12
    assert not gpu_check.needed('tomli; python_version < "3.11"')
    assert not gpu_check.needed('pytest; extra == "test"')
    assert not gpu_check.needed('pywin32; sys_platform == "win32"')


def test_the_closure_names_what_neither_the_payload_nor_the_image_holds():
    rows = [{"name": "hydra-core", "version": "1.3.8", "requires": ["omegaconf<2.4,>=2.2", "packaging",
                                                                     "antlr4-python3-runtime==4.9.*"]},
            {"name": "omegaconf", "version": "2.3.1", "requires": ["PyYAML>=5.1.0"]}]
    assert gpu_check.check_closure(rows) == ["hydra-core needs antlr4-python3-runtime==4.9.*: not carried"]
    rows.append({"name": "antlr4-python3-runtime", "version": "4.13.2", "requires": []})
    assert gpu_check.check_closure(rows) == ["hydra-core needs antlr4-python3-runtime==4.9.*: carried 4.13.2"]
    rows[-1]["version"] = "4.9.3"
    assert gpu_check.check_closure(rows) == []  # packaging and PyYAML are the image's
    assert gpu_check.check_closure([*rows, dict(rows[0])]) == ["two wheels of hydra-core"]


def test_what_is_left_behind_names_real_requirements():
    """Each package left out (with its reason) is a requirement of pyproject, so the list cannot go stale silently;
    the Poincaré section's peer is among what is carried."""
    import tomllib
    from packaging.requirements import Requirement

    project = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]
    declared = [*project["dependencies"], *(r for group in project["optional-dependencies"].values() for r in group)]
    names = {gpu_check.canonical(Requirement(r).name) for r in declared}
    assert set(gpu_check.NOT_CARRIED) <= names
    runtime = {gpu_check.canonical(Requirement(r).name) for r in gpu_check.runtime_requirements()}
    assert "gensim" in runtime
    # the image's own (never carried): what the issue says it holds
    assert {"torch", "torch-geometric", "lightning", "sentence-transformers", "transformers"} <= gpu_check.IMAGE_PACKAGES


def test_a_slimmed_wheel_drops_the_folder_and_its_record_lines_and_still_installs(tmp_path):
    wheel = make_wheel(tmp_path / "wheels")
    sizes = gpu_check.slim_wheel(wheel, ("gpucheck_probe/tests/",))
    assert sizes["bytes_after"] < sizes["bytes_before"]
    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
        record = zf.read("gpucheck_probe-0.1.dist-info/RECORD").decode()
    assert "gpucheck_probe/tests/data.txt" not in names and "tests/data.txt" not in record
    name, version, requires, modules = gpu_check.wheel_metadata(wheel)
    assert (name, version, requires, modules) == ("gpucheck-probe", "0.1", ["numpy"], ["gpucheck_probe"])


def tiny_payload(tmp_path: Path, encoder) -> Path:
    """A payload as --prepare writes it: one test wheel, the sample's passage embeddings, the manifest."""
    payload = tmp_path / "payload"
    wheel = make_wheel(payload / "wheels")
    from hyperrag.data import sample_dataset

    ds = sample_dataset()
    encoder.encode([p.content for p in ds.corpus.passages])
    manifest = {"wheels": [{"name": "gpucheck-probe", "version": "0.1", "file": wheel.name,
                            "modules": ["gpucheck_probe"], "requires": ["numpy"], "bytes": wheel.stat().st_size,
                            "sha256": hashlib.sha256(wheel.read_bytes()).hexdigest()}],
                "embedder_model": encoder.model_name}
    manifest["embeddings"] = gpu_check.export_embeddings(Path(encoder.cache.path).parents[1], payload /
                                                         "embeddings.npz", "float16")
    (payload / "manifest.json").write_text(json.dumps(manifest))
    return payload


def test_install_and_imports_and_the_carried_embeddings(tmp_path, encoder):
    payload = tiny_payload(tmp_path, encoder)
    manifest = json.loads((payload / "manifest.json").read_text())
    site = tmp_path / "site"
    res = gpu_check.install(payload, manifest, Path(sys.executable), site, 60)
    assert res["status"] == "ok" and (site / "gpucheck_probe" / "__init__.py").is_file()
    assert gpu_check.check_imports(manifest, Path(sys.executable), site, 60) == {
        "status": "ok", "imported": 1, "waiting_for_image_package": {}, "failed": {}}
    # a wheel that is not the one prepared stops the install before pip runs
    manifest["wheels"][0]["sha256"] = "0" * 64
    assert "altered" in gpu_check.install(payload, manifest, Path(sys.executable), site, 60)["error"]
    # the carried rows come back as the cache the runs read: same vectors to float16 precision
    rows = gpu_check.import_embeddings(payload / "embeddings.npz", manifest, tmp_path / "cache")
    from hyperrag.embedding.cache import EmbeddingCache

    theirs = EmbeddingCache(tmp_path / "cache" / "embeddings" / Path(encoder.cache.path).name)
    keys, vecs = theirs.rows()
    mine_keys, mine = encoder.cache.rows()
    assert rows == len(mine_keys) == len(keys) and keys == mine_keys
    assert abs(vecs - mine).max() < 2e-3
    # int8 with a scale per row (what --prepare carries when float16 would not fit): cosine to the original >= 0.9998
    small = gpu_check.export_embeddings(Path(encoder.cache.path).parents[1], tmp_path / "int8.npz", "int8")
    assert small["dtype"] == "int8" and small["bytes"] < manifest["embeddings"]["bytes"]
    gpu_check.import_embeddings(tmp_path / "int8.npz", {"embeddings": small}, tmp_path / "cache8")
    _, v8 = EmbeddingCache(tmp_path / "cache8" / "embeddings" / Path(encoder.cache.path).name).rows()
    assert (v8 * mine).sum(1).min() > 0.9998
    # a cache with no rows beside a full one (another test's model) is carried as empty, in either dtype
    (tmp_path / "mixed" / "embeddings").mkdir(parents=True)
    full = EmbeddingCache(tmp_path / "mixed" / "embeddings" / Path(encoder.cache.path).name)
    full.put_rows(mine_keys, mine)
    full.close()
    EmbeddingCache(tmp_path / "mixed" / "embeddings" / "empty-model.sqlite").close()
    mixed = gpu_check.export_embeddings(tmp_path / "mixed", tmp_path / "mixed.npz", "int8")
    assert sorted(m["rows"] for m in mixed["models"]) == [0, len(mine_keys)]


def test_a_section_past_its_time_box_is_stopped_and_keeps_what_it_finished(tmp_path):
    part = tmp_path / "part.jsonl"
    script = (f"import json, time\nopen({str(part)!r}, 'a').write(json.dumps({{'done': 1}}) + '\\n')\n"
              "time.sleep(60)\n")
    with (tmp_path / "log").open("w") as logfile:
        res = gpu_check.run_section([sys.executable, "-c", script], {}, 3, part, logfile)
    assert res == {"done": 1, "status": "timed out (partial)"}


def test_small_run_on_a_tiny_payload(tmp_path, encoder):
    """The CI version of ``--run DIR --device cpu``: install, imports, and the kNN section, within a budget."""
    payload = tiny_payload(tmp_path, encoder)
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, str(REPO_ROOT / "benchmarks" / "gpu_check.py"), "--run", str(payload),
                           "--out", str(out), "--device", "cpu", "--small", "--budget", "120",
                           "--sections", "install", "imports", "knn"], cwd=REPO_ROOT, capture_output=True,
                          text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result == json.loads((out / "gpu_check.json").read_text())
    sections = result["sections"]
    assert [sections[s]["status"] for s in ("install", "imports", "knn")] == ["ok", "ok", "ok"]
    knn = sections["knn"]
    assert knn["entities"] == 1 << 14 and knn["pairs"] == 10 * (1 << 14) and knn["first_rows_same_neighbours"] == 1.0
    assert "[knn] ok" in (out / "gpu_check.log").read_text()


@pytest.mark.slow
def test_every_small_section_on_a_tiny_payload(tmp_path, encoder):
    """Every section, shrunk: methods on the sample (CPU on both sides), PPR on the sample's graph, kNN, Poincaré."""
    pytest.importorskip("gensim")
    payload = tiny_payload(tmp_path, encoder)
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, str(REPO_ROOT / "benchmarks" / "gpu_check.py"), "--run", str(payload),
                           "--out", str(out), "--device", "cpu", "--small", "--budget", "400",
                           "--methods", "dense", "bm25"], cwd=REPO_ROOT, capture_output=True, text=True,
                          timeout=600, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    sections = json.loads(proc.stdout.strip().splitlines()[-1])["sections"]
    assert {s: r["status"] for s, r in sections.items()} == {s: "ok" for s in gpu_check.SMALL_SECTIONS}
    methods = sections["methods_sample"]["methods"]
    assert set(methods) == {"dense", "bm25"} and all(r["top5_equal_all"] for r in methods.values())
    ppr = sections["ppr"]
    assert ppr["max_abs_err_cpu_vs_igraph"] < 1e-5 and ppr["igraph_queries"] == 16
    poincare = sections["poincare"]
    assert poincare["gensim"]["map"] > 0 and poincare["at_gensim_batch_size"]["batch_size"] == 10
