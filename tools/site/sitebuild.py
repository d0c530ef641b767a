"""Build the website from the notebooks' stored outputs (no execution).

`make test` runs every notebook once (in JupyterLab, or nbval's lone copies: NBVAL_MODE), and nbval
checks that the stored outputs are what that clean run produces. Executing them again for the site
would double the time, so the test build renders the stored outputs instead: the same `_config.yml`, with execution turned
off, and the same strictness (`-W -n --keep-going`).

    python -m tools.site.sitebuild [OUTPUT_DIR]      # default: _build/test-site

The HTML lands in OUTPUT_DIR/_build/html.
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import yaml

from tools.registry import ROOT


def build_site(output_dir: Path) -> subprocess.CompletedProcess:
    output_dir = Path(output_dir).resolve()
    output_dir.mkdir(parents=True, exist_ok=True)
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    config.setdefault("execute", {})["execute_notebooks"] = "off"
    # Jupyter Book resolves local extensions against the config file's folder, which is not ROOT here.
    extensions = config.get("sphinx", {}).get("local_extensions") or {}
    for name, folder in extensions.items():
        extensions[name] = str(ROOT / folder)
    config_path = output_dir / "_config.stored-outputs.yml"
    config_path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    jupyter_book = Path(sys.executable).with_name("jupyter-book")
    cmd = [str(jupyter_book), "build", str(ROOT), "--config", str(config_path),
           "--path-output", str(output_dir), "-W", "-n", "--keep-going"]
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)


if __name__ == "__main__":
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "_build" / "test-site"
    result = build_site(out)
    sys.stdout.write(result.stdout[-4000:])
    sys.stderr.write(result.stderr[-8000:])
    print(f"\nsite: {out / '_build' / 'html'}  (exit {result.returncode})")
    sys.exit(result.returncode)
