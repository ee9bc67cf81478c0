"""`run`'s checkpoint options and --resume, run the way a user runs them (`gpu-train-monitor run ...`), in this
process: what they print, save and refuse does not need a fresh interpreter."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from gpu_train_monitor.cli.main import build_parser, main
from gpu_train_monitor.engine.checkpoint_files import read_info
from tests.support.cli import FAST, cli_in_process, user_error_line

SMALL = [*FAST, "--batch-size", "32"]  # 256 images: 8 steps an epoch


@pytest.fixture(scope="module")
def first_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A run cut by --max-steps 5 mid-epoch: (its checkpoint folder, its stderr)."""
    folder = tmp_path_factory.mktemp("checkpoints")
    result = cli_in_process("run", *SMALL, "--max-steps", "5", "--checkpoint-dir", str(folder), "--no-record")
    assert result.returncode == 0, result.stderr
    return folder, result.stderr


def saved_path(folder: Path) -> Path:
    (path,) = folder.glob("*/step-5.pt")
    return path


def test_a_run_saves_a_checkpoint_where_max_steps_ends_it_and_says_so(first_run: tuple[Path, str]) -> None:
    folder, stderr = first_run
    path = saved_path(folder)
    assert re.search(
        rf"checkpoint saved at step 5 \(the run ended mid-epoch\): {re.escape(str(path))} \(\S+ \S+\)", stderr
    ), stderr


def test_resume_continues_the_run_to_its_new_length(first_run: tuple[Path, str]) -> None:
    folder, _ = first_run
    result = cli_in_process("run", "--resume", str(saved_path(folder)), "--epochs", "2", "--no-record")
    assert result.returncode == 0, result.stderr
    assert "16 steps over 2 epochs (resumed at step 5)" in result.stderr
    assert re.search(r"^steps\s+16 \(resumed at step \d+: trained \d+ in ", result.stdout, re.MULTILINE), result.stdout
    assert "checkpoint saved at step 8 (end of epoch 1)" in result.stderr
    assert "checkpoint saved at step 16 (end of epoch 2)" in result.stderr


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--model", "resnet18"], ["--model: ", "a checkpoint of tiny-cnn trained on synthetic", "not resnet18"]),
        (["--batch-size", "64"], ["--batch-size: ", "keeps its checkpoint's batch_size (32)"]),
        (["--preset", "speedrun"], ["--preset: ", "leave --preset out"]),
        ([], ["nothing to train", "step 5", "--epochs or --max-steps"]),
    ],
)
def test_a_resume_that_cannot_be_is_one_line_naming_the_option(
    first_run: tuple[Path, str], args: list[str], expected: list[str]
) -> None:
    user_error_line(cli_in_process("run", "--resume", str(saved_path(first_run[0])), *args, "--no-record"), *expected)


def test_a_missing_or_malformed_checkpoint_is_one_line(tmp_path: Path) -> None:
    user_error_line(
        cli_in_process("run", "--resume", str(tmp_path / "nope.pt")), "cannot read the checkpoint", "No such file"
    )
    junk = tmp_path / "junk.pt"
    junk.write_bytes(b"PK\x03\x04 not really a zip")
    user_error_line(cli_in_process("run", "--resume", str(junk)), f"{junk} is damaged or not a checkpoint")


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--checkpoint-every", "-1"], ["--checkpoint-every: must be 0 or more, got -1"]),
        (["--checkpoint-keep", "-2"], ["--checkpoint-keep: must be 0 or more, got -2"]),
    ],
)
def test_bad_checkpoint_options_are_refused_before_training(args: list[str], expected: list[str]) -> None:
    user_error_line(cli_in_process("run", *SMALL, *args), *expected)


def test_a_checkpoint_dir_that_is_a_file_is_refused(tmp_path: Path) -> None:
    in_the_way = tmp_path / "file"
    in_the_way.write_text("")
    user_error_line(
        cli_in_process("run", *SMALL, "--checkpoint-dir", str(in_the_way)), "--checkpoint-dir: ", "is a file"
    )


def test_the_checkpoint_options_are_run_options_with_their_defaults() -> None:
    args = build_parser().parse_args(["run"])
    assert (args.resume, args.checkpoint_epochs, args.checkpoint_every, args.checkpoint_dir, args.checkpoint_keep) == (
        None,
        True,
        0,
        None,
        2,
    )
    assert build_parser().parse_args(["run", "--no-checkpoint-epochs"]).checkpoint_epochs is False
    helptext = build_parser()._subparsers._group_actions[0].choices["run"].format_help()  # type: ignore[union-attr]
    for option in (
        "--resume PATH",
        "--checkpoint-every N",
        "--checkpoint-dir DIR",
        "--checkpoint-keep N",
        "--no-checkpoint-epochs",
    ):
        assert option in helptext


def test_resuming_a_checkpoint_of_your_own_model_asks_you_to_name_that_code(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """weights_only keeps pickled code out of a checkpoint; its config can still name a module to import: a
    resume runs that code only when the command line names it too."""
    from tests.support.user_code import MODELS

    (tmp_path / "mynets.py").write_text(MODELS)
    monkeypatch.chdir(tmp_path)  # the user's project folder, as they run the command from it
    monkeypatch.setattr(sys, "path", list(sys.path))
    folder = tmp_path / "checkpoints"
    try:
        first = cli_in_process(
            "run",
            *SMALL,
            "--model",
            "mynets:small_net",
            "--max-steps",
            "3",
            "--checkpoint-dir",
            str(folder),
            "--no-record",
        )
        assert first.returncode == 0, first.stderr
        (path,) = folder.glob("*/step-3.pt")
        user_error_line(
            cli_in_process("run", "--resume", str(path), "--max-steps", "5", "--no-record"),
            "--model: ",
            "trained with your own model mynets:small_net",
            "--model mynets:small_net",
        )
        resumed = cli_in_process(
            "run", "--resume", str(path), "--max-steps", "5", "--model", "mynets:small_net", "--no-record"
        )
        assert resumed.returncode == 0, resumed.stderr
    finally:
        sys.modules.pop("mynets", None)  # this test's own module: another test may write one of that name


def run_here(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    """`main(["run", ...])` in this process (torch is loaded already): its stdout, once it exited 0."""
    code = main(["run", *args])
    out, err = capsys.readouterr()
    assert code == 0, err
    return out


def recorded(capsys: pytest.CaptureFixture[str], store: Path, run_id: int) -> dict:
    assert main(["runs", "show", str(run_id), "--json", "--runs-db", str(store)]) == 0
    return json.loads(capsys.readouterr().out)


def test_a_branch_saves_its_own_checkpoints_and_leaves_the_original_runs_alone(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    folder, store = tmp_path / "D", tmp_path / "runs.db"
    run_here(
        capsys,
        *SMALL,
        "--max-steps",
        "24",
        "--checkpoint-keep",
        "0",
        "--checkpoint-dir",
        str(folder),
        "--runs-db",
        str(store),
    )
    first = recorded(capsys, store, 1)
    original = {path: path.read_bytes() for path in (folder / first["run"]["uid"]).iterdir()}
    assert sorted(path.name for path in original) == ["step-16.pt", "step-24.pt", "step-8.pt"]

    run_here(
        capsys,
        "--resume",
        str(folder / first["run"]["uid"] / "step-8.pt"),
        "--max-steps",
        "24",
        "--placement",
        "stream",
        "--checkpoint-dir",
        str(folder),
        "--runs-db",
        str(store),
    )
    assert {path: path.read_bytes() for path in (folder / first["run"]["uid"]).iterdir()} == original
    assert recorded(capsys, store, 1)["checkpoints"] == first["checkpoints"]  # run 1 still lists only its own

    branch = recorded(capsys, store, 2)
    assert branch["run"]["label"] == "resumed from #1 at step 8"
    own = [entry for entry in branch["checkpoints"] if entry["step"] > 8]
    assert [entry["step"] for entry in own] == [16, 24]
    for entry in own:  # in the folder named by the branch's uid, each a checkpoint of the branch
        assert Path(entry["path"]).parent == folder / branch["run"]["uid"] != folder / first["run"]["uid"]
        assert read_info(entry["path"]).run_uid == branch["run"]["uid"]


def test_a_run_never_replaces_a_checkpoint_it_did_not_write(tmp_path: Path) -> None:
    """A checkpoint saved meanwhile by a run still going on elsewhere is kept: this run's go elsewhere."""
    from gpu_train_monitor.engine.checkpoint_files import CheckpointPolicy
    from gpu_train_monitor.engine.checkpointing import Checkpointer

    checkpointer = Checkpointer(CheckpointPolicy(directory=str(tmp_path)), "abc")
    theirs = tmp_path / "abc" / "step-8.pt"
    theirs.parent.mkdir()
    theirs.write_bytes(b"another run's")
    mine = checkpointer._own_path(8)
    assert mine != theirs and mine.parent.name.startswith("abc-") and checkpointer.folder == mine.parent
    assert checkpointer._own_path(16).parent == mine.parent  # the run's later ones follow
