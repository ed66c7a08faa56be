"""Live progress of a simulation (``sim.progress``): the parent follows the testbench's
progress file while it is being written and shows each stage with its cycles and cycles/s."""
from __future__ import annotations

import io
import json
import time

from sim.progress import ProgressTail, render


def test_render_line():
    line = render("run", 2048, 4151, 2048, 1850.4)
    assert line.startswith("run ") and "[############" in line and "2,048 / 4,151 cycles" in line
    assert "1,850 cycles/s" in line
    assert "words" in render("load", 0, 4096, 0, None) and "cycles/s" not in render(
        "load", 0, 4096, 0, None)


def test_tail_follows_a_file_being_written(tmp_path):
    """Records appear on the output while the file grows (a stage line when it starts, one
    when it completes, no duplicate), and a partly written last line waits for its end."""
    path, out = tmp_path / "progress.jsonl", io.StringIO()
    tail = ProgressTail(path, out, tty=False)
    tail.start()
    rec = lambda stage, done, total, cycle, t: json.dumps(
        {"stage": stage, "done": done, "total": total, "cycle": cycle, "t": t}) + "\n"
    with open(path, "w", buffering=1) as f:
        f.write(rec("load", 0, 100, 10, 0.0))
        f.write(rec("load", 100, 100, 60, 1.0))
        deadline = time.monotonic() + 10
        while "load" not in out.getvalue() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert "100 / 100 words" in out.getvalue()          # shown before the writer is done
        f.write(rec("run", 0, 50, 60, 1.0) + rec("run", 50, 50, 110, 2.0)
                + rec("run", 50, 50, 120, 2.5)[:20])         # the last record is incomplete
    tail.stop()
    lines = out.getvalue().splitlines()
    assert [l.split()[0] for l in lines] == ["load", "load", "run", "run"], lines
    assert "50 cycles/s" in lines[1] and "50 / 50 cycles" in lines[3]
    assert "(50 clock cycles, 50 cycles/s)" in lines[3]


def test_tail_on_a_terminal_redraws_one_line_per_stage(tmp_path):
    path, out = tmp_path / "p.jsonl", io.StringIO()
    path.write_text("".join(json.dumps({"stage": s, "done": d, "total": 4, "cycle": d,
                                        "t": d / 10}) + "\n"
                            for s in ("load", "run") for d in range(5)))
    tail = ProgressTail(path, out, tty=True)
    tail.start()
    tail.stop()
    text = out.getvalue()
    assert text.count("\n") == 2 and text.count("\r") == 10
