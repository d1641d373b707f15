"""Verdict words in the languages judges most often write, as data for the contradiction checks.

The formats are English (``PASS``, ``FAIL``, ``[[A]]``, ``NOTE: 4``), but a judge may explain itself in
another language, and an answer that says PASS and then "échec" or "不通过" says two things. Each
language lists, per setup, the words that state a verdict; `juge.judges.contradictions` finds them in
an answer's explanation (look-alikes folded, case ignored) and makes an answer that disagrees with its
own verdict `unparsed`. Outside English, a listed word counts wherever it stands, in prose too (fail
closed); English words count only as statements (see contradictions.py), since the formats' own words
are English prose words too.

Negated phrases are listed whole on the side they mean ("no aprobado" is a FAIL), and are matched
before the words they contain, so "不通过" is a FAIL and never also a PASS.

- ``pass`` / ``fail``: PASS/FAIL verdict words and phrases.
- ``better``: what follows a pairwise letter to say it is the better answer ("B es mejor", "B更好").
- ``tie``: a pairwise tie.
- ``score``: words that name a score, so "Puntuación: 2" is a second score.
"""

from __future__ import annotations

from typing import TypedDict


class Words(TypedDict):
    name: str
    pass_: tuple[str, ...]
    fail: tuple[str, ...]
    better: tuple[str, ...]
    tie: tuple[str, ...]
    score: tuple[str, ...]


# Languages by number of speakers (English first), then a few more judges are often asked to write in.
LANGUAGES: dict[str, Words] = {
    "en": {
        "name": "English",
        "pass_": ("pass", "passes", "passed", "passing"),
        "fail": ("fail", "fails", "failed", "failing", "failure"),
        "better": (
            "is better",
            "was better",
            "is clearly better",
            "is slightly better",
            "is much better",
            "is the better one",
            "is the better answer",
            "is the better response",
            "is superior",
            "is preferred",
            "is preferable",
            "is stronger",
            "is the winner",
            "wins",
            "won",
            "comes out ahead",
        ),
        "tie": ("tie", "draw", "dead heat"),
        "score": ("score", "rating", "grade", "note", "mark", "points", "total"),
    },
    "zh": {
        "name": "Chinese",
        "pass_": ("通过", "通過", "合格", "及格", "达标", "達標"),
        "fail": (
            "不通过",
            "不通過",
            "未通过",
            "未通過",
            "没通过",
            "沒通過",
            "没有通过",
            "沒有通過",
            "不合格",
            "不及格",
            "未达标",
            "不达标",
            "未達標",
            "不達標",
            "失败",
            "失敗",
        ),
        "better": ("更好", "较好", "較好", "更优", "更優", "更佳", "胜出", "勝出", "获胜", "獲勝", "更强", "更強"),
        "tie": ("平局", "平手", "打平", "不相上下"),
        "score": ("评分", "評分", "分数", "分數", "得分", "打分"),
    },
    "es": {
        "name": "Spanish",
        "pass_": ("aprobado", "aprobada", "aprueba", "superado", "superada", "apto", "apta"),
        "fail": (
            "no aprobado",
            "no aprobada",
            "no aprueba",
            "no superado",
            "no superada",
            "no apto",
            "no apta",
            "no pasa",
            "suspenso",
            "suspendido",
            "reprobado",
            "reprobada",
            "fallido",
            "fallida",
            "falla",
            "fallo",
            "rechazado",
            "rechazada",
        ),
        "better": ("es mejor", "es superior", "es preferible", "es la mejor", "gana"),
        "tie": ("empate", "empatan"),
        "score": ("puntuación", "puntaje", "calificación", "nota"),
    },
    "hi": {
        "name": "Hindi",
        "pass_": ("उत्तीर्ण", "सफल"),
        "fail": ("उत्तीर्ण नहीं", "सफल नहीं", "फेल", "अनुत्तीर्ण", "असफल", "विफल"),
        "better": ("बेहतर है", "बेहतर", "जीतता", "जीतती", "श्रेष्ठ"),
        "tie": ("बराबर", "टाई"),
        "score": ("अंक", "स्कोर", "रेटिंग"),
    },
    "ar": {
        "name": "Arabic",
        "pass_": ("ناجح", "ناجحة", "نجح", "نجحت", "مقبول", "مقبولة", "اجتاز", "اجتازت"),
        "fail": (
            "غير ناجح",
            "غير مقبول",
            "غير مقبولة",
            "لم ينجح",
            "لم تنجح",
            "لم يجتز",
            "لم تجتز",
            "راسب",
            "راسبة",
            "رسب",
            "فشل",
            "فشلت",
            "فاشل",
            "مرفوض",
            "مرفوضة",
        ),
        "better": ("أفضل", "الأفضل", "يفوز", "تفوز"),
        "tie": ("تعادل",),
        "score": ("الدرجة", "درجة", "التقييم", "تقييم", "النتيجة"),
    },
    "fr": {
        "name": "French",
        "pass_": ("réussi", "réussie", "réussite", "validé", "validée", "admis", "admise"),
        "fail": (
            "non réussi",
            "non réussie",
            "non validé",
            "non validée",
            "non admis",
            "échec",
            "échoue",
            "échoué",
            "échouée",
            "raté",
            "ratée",
            "refusé",
            "refusée",
            "recalé",
            "recalée",
        ),
        "better": (
            "est meilleur",
            "est meilleure",
            "est supérieur",
            "est supérieure",
            "est préférable",
            "gagne",
            "l'emporte",
        ),
        "tie": ("égalité", "ex aequo", "match nul"),
        "score": ("note", "score", "évaluation"),
    },
    "pt": {
        "name": "Portuguese",
        "pass_": ("aprovado", "aprovada", "passou"),
        "fail": (
            "não aprovado",
            "não aprovada",
            "não passou",
            "não passa",
            "reprovado",
            "reprovada",
            "reprova",
            "falhou",
            "falha",
            "recusado",
            "recusada",
        ),
        "better": ("é melhor", "é superior", "é preferível", "vence", "ganha"),
        "tie": ("empate", "empatam"),
        "score": ("pontuação", "nota", "avaliação"),
    },
    "ru": {
        "name": "Russian",
        "pass_": ("пройдено", "пройден", "прошёл", "прошел", "прошла", "зачёт", "зачет", "зачтено"),
        "fail": (
            "не пройдено",
            "не пройден",
            "не прошёл",
            "не прошел",
            "не прошла",
            "не зачтено",
            "незачёт",
            "незачет",
            "провал",
            "провален",
            "провалено",
            "отклонено",
            "отклонён",
            "неудача",
        ),
        "better": ("лучше", "побеждает", "выигрывает", "превосходит"),
        "tie": ("ничья", "ничью"),
        "score": ("оценка", "балл", "баллов", "рейтинг"),
    },
    "de": {
        "name": "German",
        "pass_": ("bestanden",),
        "fail": (
            "nicht bestanden",
            "durchgefallen",
            "fehlgeschlagen",
            "ungenügend",
            "abgelehnt",
        ),
        "better": ("ist besser", "ist überlegen", "ist vorzuziehen", "gewinnt"),
        "tie": ("unentschieden", "gleichstand"),
        "score": ("bewertung", "punktzahl", "punkte", "note"),
    },
    "ja": {
        "name": "Japanese",
        "pass_": ("合格", "通過"),
        "fail": (
            "不合格",
            "合格ではない",
            "合格でない",
            "合格しない",
            "合格しなかった",
            "通過しない",
            "通過しなかった",
            "不通過",
            "失敗",
            "落第",
        ),
        "better": ("の方が良い", "の方がよい", "の方が優れ", "が優れ", "がより良い", "が良い", "の勝ち", "が勝ち"),
        "tie": ("引き分け", "同点"),
        "score": ("スコア", "点数", "評価", "得点"),
    },
    "ko": {
        "name": "Korean",
        "pass_": ("통과", "합격"),
        "fail": ("불통과", "미통과", "통과하지 못", "통과하지 않", "통과 못", "불합격", "실패", "탈락"),
        "better": (
            "가 더 낫",
            "이 더 낫",
            "가 더 좋",
            "이 더 좋",
            "가 우수",
            "이 우수",
            "가 이긴",
            "이 이긴",
            "의 승리",
        ),
        "tie": ("무승부", "동점"),
        "score": ("점수", "평점", "평가"),
    },
    "it": {
        "name": "Italian",
        "pass_": ("superato", "superata", "promosso", "promossa", "approvato", "approvata"),
        "fail": (
            "non superato",
            "non superata",
            "non approvato",
            "non approvata",
            "bocciato",
            "bocciata",
            "respinto",
            "respinta",
            "fallito",
            "fallita",
            "insufficiente",
        ),
        "better": ("è migliore", "è meglio", "è superiore", "è preferibile", "vince"),
        "tie": ("pareggio", "parità"),
        "score": ("punteggio", "voto", "valutazione"),
    },
    "tr": {
        "name": "Turkish",
        "pass_": ("geçti", "başarılı"),
        "fail": ("geçmedi", "geçemez", "kaldı", "başarısız", "reddedildi"),
        "better": ("daha iyi", "üstün", "kazanır", "kazanıyor"),
        "tie": ("berabere", "eşit"),
        "score": ("puan", "skor"),
    },
    "id": {
        "name": "Indonesian",
        "pass_": ("lulus", "berhasil"),
        "fail": ("tidak lulus", "tidak berhasil", "gagal", "ditolak"),
        "better": ("lebih baik", "lebih unggul", "menang"),
        "tie": ("seri", "imbang"),
        "score": ("nilai", "skor"),
    },
}
