"""The HTML report's inline style sheet and filter script (html.py): constant text, hashed into its CSP."""

STYLE = """
body{font:14px/1.45 system-ui,sans-serif;margin:1.5rem auto;max-width:1200px;padding:0 1rem;color:#1b1f24}
h1{font-size:1.6rem;margin-bottom:.2rem}h2{border-bottom:2px solid #d0d7de;padding-bottom:.2rem;margin-top:2rem}
table{border-collapse:collapse;margin:.5rem 0;width:100%}th,td{border:1px solid #d0d7de;padding:.25rem .45rem;
text-align:left;vertical-align:top}th{background:#f3f5f7}td.num{text-align:right;font-variant-numeric:tabular-nums}
td code,#findings td:nth-child(n+4),details td:nth-child(2){overflow-wrap:anywhere}
#findings td:nth-child(5) code,td code.path{overflow-wrap:break-word}
.pair{display:grid;grid-template-columns:1fr 1fr;gap:1rem}.pair>section{min-width:0}
.pair h3{margin:.4rem 0}svg{max-width:100%;height:auto}.empty{color:#6e7781;font-style:italic}
.sev-error{color:#b3261e;font-weight:600}.sev-warning{color:#9a6700}.sev-info{color:#0969da}
.estimate{background:#fff8c5;padding:.1rem .3rem;border-radius:3px}.meta{color:#57606a}
details{margin:.3rem 0}summary{cursor:pointer}code{font-size:.92em}.scroll{overflow-x:auto}
.results table{font-size:13px}.results td:not(.num){overflow-wrap:break-word}.results th{vertical-align:bottom}
.pass{color:#1a7f37;font-weight:600}.fail{color:#b3261e;font-weight:600}.warn{color:#9a6700;font-weight:600}
td.fail{background:#ffebe9}td.pass{background:#dafbe1}
#findings tr.hint td{border-top:0;color:#57606a;font-size:13px}
#findings tr.cause td,#findings tr.waived td{background:#f6f8fa;font-style:italic}
#findings td.follows{padding-left:1.2rem}#findings details ul{margin:.2rem 0;padding-left:1.2rem}
#findings td:first-child{white-space:nowrap}#findings th:nth-child(4){width:45%}
"""

SCRIPT = """
(function () {
  var sev = document.getElementById("f-severity");
  var fam = document.getElementById("f-family");
  var shown = document.getElementById("f-shown");
  var rows = document.querySelectorAll("#findings tbody tr[data-severity]");
  function fromHash(name) {
    var m = new RegExp("(?:^|[#&])" + name + "=([A-Za-z]+)").exec(window.location.hash);
    return m ? m[1] : "";
  }
  function apply() {
    var n = 0;
    rows.forEach(function (row) {
      var ok = (!sev.value || row.dataset.severity === sev.value) &&
               (!fam.value || row.dataset.family === fam.value);
      row.hidden = !ok;
      var count = row.querySelector("[data-count]");
      if (ok && count) { n += Number(count.dataset.count); }
    });
    shown.textContent = String(n);
    // a cause's heading shows while any row that follows from it does
    document.querySelectorAll("#findings tr.cause").forEach(function (head) {
      var next = head.nextElementSibling, any = false;
      while (next && !next.classList.contains("cause") &&
             (next.classList.contains("follows") || next.querySelector("td.follows"))) {
        if (!next.hidden) { any = true; }
        next = next.nextElementSibling;
      }
      head.hidden = !any;
    });
  }
  sev.value = fromHash("severity");
  fam.value = fromHash("family");
  if (sev.selectedIndex < 0) { sev.value = ""; }
  if (fam.selectedIndex < 0) { fam.value = ""; }
  sev.addEventListener("change", apply);
  fam.addEventListener("change", apply);
  apply();
  document.body.dataset.filters = "ready";
})();
"""
