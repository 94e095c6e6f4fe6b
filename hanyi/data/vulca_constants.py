"""VULCA release facts shared by the data builder and the task glue.

The twelve paintings of the 清院 十二月令图 series and the file-name prefix of the released images (spec §1.1).
"""

#: (doc_id, month_en, month_zh sub-title) of the 清院 十二月令图 series; sub-titles as in the released folder names.
MONTHS = (
    ("01", "January", "一月_正月"), ("02", "February", "二月"), ("03", "March", "三月"), ("04", "April", "四月"),
    ("05", "May", "五月_龙舟竞渡"), ("06", "June", "六月"), ("07", "July", "七月"), ("08", "August", "八月_仲秋"),
    ("09", "September", "九月"), ("10", "October", "十月_开冬农闲"), ("11", "November", "十一月"),
    ("12", "December", "十二月"),
)  # fmt: skip
TITLE_PREFIX = "清_清院_十二月令图_"
