"""python -m tools.explorers table   # the table of explorer kinds and fields (markdown) in tools/explorers/README.md
python -m tools.explorers js      # rewrite book/_static/explorer-contract.js from the schemas
python -m tools.explorers check   # exit 1 when explorer-contract.js is out of date
"""
import sys

from tools.explorers import CONTRACT_JS, contract_js, table

command = sys.argv[1] if len(sys.argv) > 1 else ""
if command == "table":
    print(table())
elif command == "js":
    CONTRACT_JS.write_text(contract_js(), encoding="utf-8")
    print(f"wrote {CONTRACT_JS}")
elif command == "check":
    current = CONTRACT_JS.read_text(encoding="utf-8") if CONTRACT_JS.exists() else ""
    if current != contract_js():
        sys.exit(f"{CONTRACT_JS} is out of date: run `python -m tools.explorers js`")
    print("explorer-contract.js is up to date")
else:
    sys.exit(__doc__)
