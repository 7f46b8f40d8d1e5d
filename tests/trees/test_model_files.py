"""reliquant.trees.readers.model_files: a model file whose trees were edited (types unchanged)
is refused by load_model, naming the file, the tree and the node, for every reader: a
scikit-learn skops file (trees, forests, gradient boosting), an XGBoost .json / .ubj, a
LightGBM .txt. Before, such files looped forever, answered R = 1 "exact", raised an
IndexError, or crashed the process inside the library."""

from __future__ import annotations

import json
import subprocess
import sys

import lightgbm as lgb
import numpy as np
import pytest
import skops.io as sio
import xgboost as xgb
from sklearn.ensemble import (
    GradientBoostingClassifier,
    HistGradientBoostingClassifier,
    RandomForestClassifier,
)
from sklearn.tree import DecisionTreeClassifier

from reliquant.trees.readers import extract_ensemble, load_model
from reliquant.trees.readers.lightgbm_text import check_model_text
from reliquant.trees.tree_checks import MalformedTreeError

CYCLE = "its left child is itself: a cycle"


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 3))
    return X, (X[:, 0] + X[:, 1] > 0).astype(int)


def _refused(path, *words: str) -> str:
    with pytest.raises(ValueError) as info:
        load_model(path)
    message = str(info.value)
    assert message.startswith(str(path)), message
    for word in words:
        assert word in message, (word, message)
    return message


@pytest.mark.parametrize(
    ("value", "words"),
    [
        (0, ["tree 0, node 0: " + CYCLE]),
        (-5, ["tree 0, node 0: its left child is -5, which is neither -1 (no child) nor a node "
              "of the tree (0 .. 12)"]),
        (10**6, ["tree 0, node 0: its left child is 1000000"]),
    ],
)  # fmt: skip
def test_an_edited_decision_tree_skops_file_is_refused(tmp_path, data, value, words):
    """The issue's three files: left_child[0] = 0 (an endless loop), -5 (R = 1 "exact" for
    every sample), 10**6 (an IndexError; scikit-learn's predict crashes on it)."""
    model = DecisionTreeClassifier(max_depth=3, random_state=0).fit(*data)
    assert model.tree_.node_count == 13
    model.tree_.children_left[0] = value
    sio.dump(model, tmp_path / "tree.skops")
    _refused(tmp_path / "tree.skops", "malformed model (DecisionTreeClassifier)", *words)


def test_edited_forests_and_boosting_skops_files_are_refused(tmp_path, data):
    X, y = data
    forest = RandomForestClassifier(n_estimators=4, max_depth=3, random_state=0).fit(X, y)
    forest.estimators_[2].tree_.feature[0] = 9
    sio.dump(forest, tmp_path / "forest.skops")
    _refused(tmp_path / "forest.skops", "tree 2, node 0: it splits on feature 9, but the model "
             "has 3 features")  # fmt: skip
    boosted = GradientBoostingClassifier(n_estimators=3, max_depth=2, random_state=0).fit(X, y)
    boosted.estimators_[1, 0].tree_.children_right[0] = 0
    sio.dump(boosted, tmp_path / "gb.skops")
    _refused(tmp_path / "gb.skops", "tree 1, node 0: its right child is itself: a cycle")
    hist = HistGradientBoostingClassifier(max_iter=3, max_depth=3, random_state=0).fit(X, y)
    nodes = hist._predictors[2][0].nodes
    nodes["left"][1] = nodes["left"][0]  # node 1 and node 0 share a child
    sio.dump(hist, tmp_path / "hist.skops")
    _refused(tmp_path / "hist.skops", "tree 2, node", "it is the child of two nodes")


@pytest.fixture(scope="module")
def xgb_json(data, tmp_path_factory):
    path = tmp_path_factory.mktemp("xgb") / "ok.json"
    xgb.XGBClassifier(n_estimators=3, max_depth=3, random_state=0).fit(*data).save_model(path)
    return json.loads(path.read_text())


def _xgb_file(doc: dict, path, edit) -> None:
    doc = json.loads(json.dumps(doc))
    edit(doc["learner"]["gradient_booster"]["model"])
    path.write_text(json.dumps(doc))


@pytest.mark.parametrize(
    ("edit", "words"),
    [
        (lambda m: m["trees"][0]["left_children"].__setitem__(0, 0), ["tree 0, node 0: " + CYCLE]),
        (lambda m: m["trees"][1]["left_children"].__setitem__(0, -5),
         ["tree 1, node 0: its left child is -5"]),
        (lambda m: m["trees"][0]["left_children"].__setitem__(0, 10**6),
         ["tree 0, node 0: its left child is 1000000"]),
        (lambda m: m["trees"][0]["split_indices"].__setitem__(0, 7),
         ["tree 0, node 0: it splits on feature 7, but the model has 3 features"]),
        (lambda m: m["tree_info"].__setitem__(0, 5),
         ["tree_info [5, 0, 0] must give each of the 3 trees an output 0 .. 0"]),
    ],
)  # fmt: skip
def test_an_edited_xgboost_json_file_is_refused(tmp_path, xgb_json, edit, words):
    """XGBoost loads these files; its predict crashed the process on each of them."""
    _xgb_file(xgb_json, tmp_path / "bad.json", edit)
    _refused(tmp_path / "bad.json", *words)


def test_an_edited_xgboost_ubj_file_is_refused(tmp_path, xgb_json):
    _xgb_file(xgb_json, tmp_path / "bad.json",
              lambda m: m["trees"][2]["right_children"].__setitem__(0, 0))  # fmt: skip
    booster = xgb.Booster(model_file=str(tmp_path / "bad.json"))  # loads; never predicts
    booster.save_model(tmp_path / "bad.ubj")
    _refused(tmp_path / "bad.ubj", "tree 2, node 0: its right child is itself: a cycle")


def test_a_pruned_xgboost_model_keeps_its_deleted_nodes_and_reads_the_same(data):
    """XGBoost keeps the nodes its pruning deleted (parentless leaves, ``num_deleted``): they
    are allowed, and the ensemble predicts as the booster does."""
    X, y = data
    model = xgb.XGBClassifier(n_estimators=8, max_depth=5, gamma=3.0, tree_method="exact",
                              random_state=0).fit(X, y)  # fmt: skip
    ens = extract_ensemble(model)
    assert sum(t.n_deleted for t in ens.trees) > 0
    Z = np.random.default_rng(1).normal(size=(400, 3))
    np.testing.assert_array_equal(ens.predict(Z), model.predict(Z))


@pytest.fixture(scope="module")
def lgb_text(data):
    model = lgb.LGBMClassifier(n_estimators=3, num_leaves=4, verbose=-1).fit(*data)
    text = model.booster_.model_to_string()
    assert "left_child=1 -1 -3\n" in text  # the edits below start from this tree
    return text


def _edit_lightgbm(text: str, old: str, new: str, *, sizes: bool = True) -> str:
    """``old`` replaced by ``new`` in the first tree; ``tree_sizes`` recomputed (as a file
    written by hand with care), or left as they were."""
    edited = text.replace(old, new, 1)
    assert edited != text
    if not sizes:
        return edited
    first, end = edited.index("\nTree=") + 1, edited.index("end of trees")
    blocks = ["Tree=" + b for b in edited[first:end].split("Tree=")[1:]]
    line = "tree_sizes=" + " ".join(str(len(b.encode())) for b in blocks)
    head, rest = edited.split("tree_sizes=", 1)
    return head + line + rest[rest.index("\n") :]


@pytest.mark.parametrize(
    ("old", "new", "words"),
    [
        ("left_child=1 -1 -3", "left_child=0 -1 -3", ["tree 0, split 0: " + CYCLE]),
        ("left_child=1 -1 -3", "left_child=-9 -1 -3",
         ["tree 0, split 0: its left_child is -9: neither a split 0 .. 2 nor a leaf -1 .. -4"]),
        ("left_child=1 -1 -3", "left_child=99 -1 -3", ["tree 0, split 0: its left_child is 99"]),
        ("right_child=-2 2 -4", "right_child=-2 -3 -4",
         ["tree 0, leaf 2: it is the child of two nodes (split 1 and split 2)"]),
        ("split_feature=0 1 0", "split_feature=0 7 0", ["tree 0, split 1: it splits on feature 7"]),
        ("left_child=1 -1 -3", "left_child=1 -1", ["tree 0: left_child holds 2 values; LightGBM "
                                                   "reads 3"]),
    ],
)  # fmt: skip
def test_an_edited_lightgbm_text_file_is_refused(tmp_path, lgb_text, old, new, words):
    """LightGBM loads these files; its predict loops or reads out of bounds, its dump_model
    crashed the process."""
    (tmp_path / "bad.txt").write_text(_edit_lightgbm(lgb_text, old, new))
    _refused(tmp_path / "bad.txt", *words)
    with pytest.raises(MalformedTreeError, match=r"^malformed: tree 0"):
        check_model_text(_edit_lightgbm(lgb_text, old, new), "malformed")


def test_lightgbm_texts_that_kill_its_parser_are_refused_first(tmp_path, lgb_text):
    """A tree_sizes entry that misses its tree ended the process inside LightGBM's parser
    ("terminate called"); run apart, load_model now exits with the refusal. A Booster built
    in memory from a malformed text is refused by the reader before dump_model walks it."""
    bad = _edit_lightgbm(lgb_text, "left_child=1 -1 -3", "left_child=1 -1 -3 ", sizes=False)
    (tmp_path / "sizes.txt").write_text(bad)
    cycle = _edit_lightgbm(lgb_text, "left_child=1 -1 -3", "left_child=0 -1 -3")
    (tmp_path / "cycle.txt").write_text(cycle)
    code = (
        "import sys, lightgbm as lgb\n"
        "from reliquant.trees.readers import extract_ensemble, load_model\n"
        "for line in (lambda: load_model(sys.argv[1]),\n"
        "             lambda: extract_ensemble(lgb.Booster(model_str=open(sys.argv[2]).read()))):\n"
        "    try:\n"
        "        line()\n"
        "    except ValueError as err:\n"
        "        print('refused:', err)\n"
    )
    run = subprocess.run([sys.executable, "-c", code, str(tmp_path / "sizes.txt"),
                          str(tmp_path / "cycle.txt")], capture_output=True, text=True,
                         timeout=600)  # fmt: skip
    assert run.returncode == 0, run.stderr[-2000:]
    lines = [line for line in run.stdout.splitlines() if line.startswith("refused:")]
    assert len(lines) == 2, run.stdout
    assert f"{tmp_path / 'sizes.txt'}: tree_sizes" in lines[0]
    assert "do not match the 3 Tree= blocks" in lines[0]
    assert "tree 0, split 0: " + CYCLE in lines[1]
