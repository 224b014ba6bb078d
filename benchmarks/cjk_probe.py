"""How Chinese and Japanese are matched: per-character terms, overlapping bigrams, or jieba's
segmenter, judged on a probe set of questions through the real indexer and searcher.

The probe (``probe_sessions``, ``PROBES``): developer sessions in Chinese and Japanese,
one per topic (a question and its answer), and sessions of other work that share common
characters with the questions (的, 数, 据, 会, 问, 题, テ, ス, ト …) but none of their words.
Each question is a paraphrase of its topic's, asked at session level (``recall --raw``):
its topic's session is the one relevant hit.

Each way of splitting CJK text (``VARIANTS``) is put in place of
``indexer.schema.prepare_content``'s CJK step, the probe is indexed into a throw-away
``RECALL_HOME`` and every question searched with ``Searcher().search``. Figures: MRR@10 and
hit@1 of the relevant session, and how many *other* sessions are shown in the top 3 (what
a user sees at places 2-3). jieba is measured only when importable (it is not a
dependency of recall: ``pip install jieba`` into the venv to include it); its import and
dictionary load are timed in a fresh process, against the hook's import budget.

    python -m benchmarks.cjk_probe [--json]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

# (language, the topic's question as first asked, the answer it got, the question asked of recall)
PROBES: list[tuple[str, str, str, str]] = [
    (
        "zh",
        "数据库连接池老是耗尽，怎么回事？",
        "原因是事务没有提交就返回了，连接一直被占用；已在中间件里统一关闭。",
        "为什么数据库的连接会被占满",
    ),
    (
        "zh",
        "前端打包后体积太大，怎么优化？",
        "把图表库改成按需加载，并开启代码分割，体积从三兆降到八百K。",
        "前端的包为什么变小了",
    ),
    (
        "zh",
        "为什么定时任务在周末没有执行？",
        "调度器的时区配置成了美国时间，周末的触发点落在了周五晚上。",
        "周末的任务为什么没跑",
    ),
    ("zh", "缓存穿透导致数据库压力很大", "对不存在的键也缓存空值，并加了布隆过滤器。", "数据库压力大是因为缓存吗"),
    (
        "zh",
        "单元测试在持续集成里随机失败",
        "测试之间共享了全局状态，改成每个测试重新初始化夹具。",
        "测试时好时坏的原因",
    ),
    ("zh", "日志里出现大量超时错误", "下游支付接口响应慢，把超时时间调到十秒并加了重试。", "支付超时后来怎么办"),
    ("zh", "用户上传的头像显示不出来", "对象存储的跨域规则没有配置，补上之后头像正常显示。", "用户头像为什么不显示"),
    ("zh", "内存泄漏让服务每天重启一次", "事件监听器注册后从未注销，修复后内存曲线平稳。", "服务为什么每天都要重启"),
    ("zh", "搜索结果排序不准确", "把标题字段的权重提高到正文的三倍，并加入时间衰减。", "标题和正文的权重"),
    ("zh", "部署脚本在新服务器上报权限错误", "部署用户没有写日志目录的权限，用组权限解决。", "新服务器上部署失败"),
    ("zh", "接口文档和实际返回字段不一致", "我们决定从代码注解自动生成文档，不再手写。", "文档是手写的吗"),
    ("zh", "消息队列里的消息被重复消费", "消费者处理完才确认，并用消息编号做幂等去重。", "同一条消息处理了两次"),
    (
        "ja",
        "テストが時々失敗するのはなぜ？",
        "タイムゾーンの違いで、深夜に日付がずれていました。時計を固定して直しました。",
        "テストが落ちる理由は何でしたか",
    ),
    (
        "ja",
        "本番環境でメモリ使用量が増え続ける",
        "キャッシュに上限がなかったので、最大件数を設定しました。",
        "本番のメモリが足りなくなる",
    ),
    (
        "ja",
        "ログイン画面が遅いです",
        "パスワードのハッシュ計算の回数が多すぎたので、適切な値に下げました。",
        "ログインに時間がかかる",
    ),
    ("ja", "デプロイが途中で止まる", "ヘルスチェックの待ち時間が短すぎたため、延長しました。", "デプロイが終わらない"),
    (
        "ja",
        "請求書のPDFで日本語が文字化けする",
        "フォントを埋め込んでいなかったので、日本語フォントを追加しました。",
        "PDFの日本語が読めない",
    ),
    (
        "ja",
        "検索結果の並び順がおかしい",
        "更新日時ではなく作成日時で並べていたので修正しました。",
        "検索結果の順番が変",
    ),
    (
        "ja",
        "データベースの移行でエラーが出る",
        "外部キー制約の順番が逆だったので、移行スクリプトを分けました。",
        "移行スクリプトで失敗した件",
    ),
    (
        "ja",
        "通知メールが二重に送られる",
        "再試行のときに送信済みかどうかを確認していなかったのが原因です。",
        "同じメールが二通来る",
    ),
    (
        "ja",
        "画像のアップロードに失敗する",
        "ファイルサイズの上限が一メガだったので、十メガに引き上げました。",
        "画像が上げられない",
    ),
    (
        "ja",
        "型チェックで大量の警告が出る",
        "古い型定義パッケージを更新したら警告が消えました。",
        "警告がたくさん出る件",
    ),
]

# other work: sessions that share common characters with the questions, none of their words
OTHERS: list[tuple[str, str]] = [
    ("我们今天开会讨论了新的产品路线图", "好的，会议纪要已经整理好了。"),
    ("帮我写一个读取配置文件的函数", "已经写好了，支持默认值和环境变量覆盖。"),
    ("这个问题我们下周再看吧", "好的，我记在待办里了。"),
    ("数学公式的渲染用哪个库比较好", "可以用现成的公式渲染库，体验不错。"),
    ("为什么页面的字体看起来很模糊", "是缩放比例的问题，改成整数倍就清楚了。"),
    ("请把用户列表按注册时间排序", "已经按注册时间倒序排列。"),
    ("能不能把按钮的颜色改成蓝色", "改好了，主按钮现在是蓝色。"),
    ("中文输入法在编辑器里会卡顿", "关闭了实时拼写检查以后就流畅了。"),
    ("今日の会議の議事録をまとめてください", "まとめました。次回は金曜日です。"),
    ("設定ファイルを読み込む関数を書いて", "書きました。環境変数で上書きできます。"),
    ("ボタンの色を青に変えてください", "変更しました。"),
    ("この問題は来週もう一度見ましょう", "了解しました。タスクに追加しました。"),
    ("ユーザー一覧を登録日で並べ替えて", "登録日の新しい順に並べ替えました。"),
    ("画面のフォントがぼやけて見える", "拡大率の設定を整数にしたらはっきりしました。"),
    ("新しいメンバーのアカウントを作って", "作成して招待を送りました。"),
    ("データの集計を毎朝メールで送りたい", "毎朝九時に送るジョブを設定しました。"),
    # the questions' characters in other words (数学/根据 for 数据, 支持 for 支付, テレビ/ストーリー for テスト …)
    ("数学的根据在于公理，连续两天都在看", "这本书的体系很完整。"),
    ("支持付出的时间超过了预期", "下次留出更多时间。"),
    ("存储太缓慢了，要穿过两层防火墙", "网络拓扑需要简化。"),
    ("头发显得不太出色，来源于光线", "换个灯光试试。"),
    ("排队的序号和权力无关", "按先来后到处理。"),
    ("复习的费用消耗了不少重要资源", "预算要重新分配。"),
    ("内部存放的材料泄露了，漏洞在哪", "安全团队在查。"),
    ("测量任务的定额，周末执行不了就算了", "好的。"),
    ("テレビのストーリーが面白い", "来週も見ます。"),
    ("メモ用の量を使い分ける", "ノートを二冊にしました。"),
    ("画面のログをインポートした", "取り込みは完了です。"),
    ("請求と書類の字が化けて見える", "眼鏡を替えました。"),
    ("並木の順番に検める", "散歩のついでです。"),
    ("通り知らせのメール", "受け取りました。"),
    ("データの移り変わりを見る", "グラフにしました。"),
    ("型紙のチェック柄", "生地を買いました。"),
]


def _split_characters(run: str) -> str:
    return " " + " ".join(run) + " "


def _split_bigrams(run: str) -> str:
    from indexer.schema import _CJK_RUN, _bigrams

    return _bigrams(_CJK_RUN.match(run))


def _split_jieba(run: str) -> str:
    import jieba

    return " " + " ".join(w for w in jieba.cut(run) if w.strip()) + " "


VARIANTS = {"characters (schema 3)": _split_characters, "bigrams (schema 4)": _split_bigrams, "jieba": _split_jieba}


def probe_case():
    """The probe as one project of ``benchmarks.retrieval`` sessions, and each probe's session id."""
    from benchmarks.retrieval import Case, Session, Turn, uid

    start = datetime(2026, 10, 1, 9, tzinfo=timezone.utc)
    sessions, relevant = [], {}
    for i, (question, answer) in enumerate([(q, a) for _, q, a, _ in PROBES] + OTHERS):
        at = start + timedelta(hours=i)
        sess = Session(
            uid("cjk", i),
            f"cjk-{i}",
            [
                Turn(uid("cjk", i, 0), "user", question, at),
                Turn(uid("cjk", i, 1), "assistant", answer, at + timedelta(seconds=30)),
            ],
        )
        sessions.append(sess)
        if i < len(PROBES):
            relevant[i] = sess.session_id
    return Case("cjk", "probe", "/probe/cjk", sessions, []), relevant


@contextlib.contextmanager
def splitting(split):
    """``prepare_content`` with each run of CJK characters split by ``split`` (index and
    query alike): camelCase split as before, then the CJK step replaced."""
    import indexer.documents as documents
    import indexer.schema as schema
    import recall.search.query as query

    def prepare(text: str) -> str:
        return schema._CJK_RUN.sub(lambda m: split(m.group(0)), schema._CAMEL.sub(" ", text))

    saved = (documents.prepare_content, query.prepare_content)
    documents.prepare_content = query.prepare_content = prepare
    try:
        yield
    finally:
        documents.prepare_content, query.prepare_content = saved


def evaluate(split) -> dict:
    from benchmarks.retrieval import build_index, recall_home, write_transcripts
    from recall.search.searcher import Searcher

    case, relevant = probe_case()
    per_lang: dict[str, list[tuple[float, int, int]]] = {}
    with tempfile.TemporaryDirectory(prefix="recall-cjk-") as tmp, splitting(split), recall_home(Path(tmp) / "home"):
        write_transcripts([case], Path(tmp) / "projects")
        build_index(Path(tmp) / "projects")
        searcher = Searcher()
        for i, (lang, _, _, asked) in enumerate(PROBES):
            ids = [h.session_id for h in searcher.search(asked, limit=10)]
            rank = ids.index(relevant[i]) + 1 if relevant[i] in ids else 0
            others = sum(1 for s in ids[:3] if s != relevant[i])
            per_lang.setdefault(lang, []).append((1.0 / rank if rank else 0.0, int(rank == 1), others))
    out = {}
    for lang, rows in per_lang.items():
        n = len(rows)
        out[lang] = {
            "n": n,
            "mrr@10": round(sum(r[0] for r in rows) / n, 3),
            "hit@1": round(sum(r[1] for r in rows) / n, 3),
            "others_in_top3": round(sum(r[2] for r in rows) / n, 2),
        }
    return out


def jieba_import_seconds() -> float | None:
    """jieba's import plus its dictionary load (first cut), in a fresh process."""
    code = (
        "import time; t=time.perf_counter(); import jieba; jieba.setLogLevel(60); "
        "list(jieba.cut('数据库连接池')); print(time.perf_counter()-t)"
    )
    try:
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
        return float(out.stdout.strip()) if out.returncode == 0 else None
    except (OSError, ValueError, subprocess.TimeoutExpired):
        return None


def run() -> dict:
    try:
        import jieba  # noqa: F401

        jieba.setLogLevel(60)
        have_jieba = True
    except ImportError:
        have_jieba = False
    report = {
        "probes": {"zh": sum(1 for p in PROBES if p[0] == "zh"), "ja": sum(1 for p in PROBES if p[0] == "ja")},
        "other_sessions": len(OTHERS),
        "variants": {},
    }
    for name, split in VARIANTS.items():
        if name == "jieba" and not have_jieba:
            report["variants"][name] = None
            continue
        t = time.perf_counter()
        report["variants"][name] = evaluate(split)
        report["variants"][name]["seconds"] = round(time.perf_counter() - t, 2)
    report["jieba_import_and_load_s"] = jieba_import_seconds() if have_jieba else None
    return report


def markdown(report: dict) -> str:
    lines = ["| splitting | language | MRR@10 | hit@1 | other sessions in top 3 |", "|---|---|---:|---:|---:|"]
    for name, res in report["variants"].items():
        if res is None:
            lines.append(f"| {name} | — | not installed | | |")
            continue
        for lang in ("zh", "ja"):
            r = res[lang]
            lines.append(
                f"| {name} | {lang} (n={r['n']}) | {r['mrr@10']:.3f} | {r['hit@1']:.3f} | {r['others_in_top3']:.2f} |"
            )
    if report.get("jieba_import_and_load_s") is not None:
        lines.append("")
        lines.append(
            f"jieba's import and dictionary load: {report['jieba_import_and_load_s']:.2f} s "
            "in a fresh process (the hook's whole import budget is tens of milliseconds)."
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.cjk_probe", description=__doc__.split("\n")[0])
    ap.add_argument("--json", action="store_true", help="print the report as JSON")
    args = ap.parse_args(argv)
    report = run()
    print(json.dumps(report, ensure_ascii=False, indent=1) if args.json else markdown(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
