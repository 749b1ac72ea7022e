// pytest-retrieval HTML report: sort and filter the per-query table; show a query's
// top 10 now and in the baseline side by side. No network, no libraries.
(function () {
  "use strict";
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = text;
    return e;
  }
  function gradeBadge(grade) {
    var unj = grade === undefined || grade === null;
    return el("span", "grade " + (unj ? "unjudged" : "g" + grade), unj ? "unjudged" : "grade " + grade);
  }
  function rankList(data, q, docs, other, kind) {
    if (!docs.length) return el("p", "note nohits", "no hits");
    var ol = el("ol", "rank");
    var judged = (data.queries[q] || {}).judged || {};
    var pos = {};
    (other || []).forEach(function (d, i) { pos[d] = i + 1; });
    docs.forEach(function (d, i) {
      var li = el("li");
      var inOther = Object.prototype.hasOwnProperty.call(pos, d);
      if (other && !inOther) li.className = kind === "now" ? "entered" : "left";
      li.appendChild(gradeBadge(judged[d]));
      li.appendChild(document.createTextNode(" "));
      li.appendChild(el("span", "docid", d));
      var title = data.titles[d];
      if (title) li.appendChild(document.createTextNode(" " + title));
      if (other && inOther && pos[d] !== i + 1 && kind === "now") {
        var delta = pos[d] - (i + 1);
        li.appendChild(el("span", "move", " (" + (delta > 0 ? "↑" : "↓") + Math.abs(delta) + " from #" + pos[d] + ")"));
      } else if (other && !inOther) {
        li.appendChild(el("span", "move", kind === "now" ? " (new in the top " + data.k + ")" : " (left the top " + data.k + ")"));
      }
      ol.appendChild(li);
    });
    return ol;
  }
  function showQuery(box, data, q) {
    var panel = box.querySelector(".panel");
    var retriever = data.retrievers[box.querySelector("select.retriever").value];
    panel.textContent = "";
    var info = data.queries[q] || {};
    panel.appendChild(el("h4", null, q + ": " + (info.text || "")));
    var now = (data.now[retriever] || {})[q] || [];
    var base = data.base[retriever] ? (data.base[retriever][q] || null) : null;
    var lines = (data.diff[retriever] || {})[q];
    if (lines && lines.length) {
      var ul = el("ul", "difflines");
      lines.forEach(function (l) { ul.appendChild(el("li", null, l)); });
      panel.appendChild(ul);
    } else if (!base) {
      panel.appendChild(el("p", "note", "No baseline ranking for this query: the current top " + data.k + " only."));
    }
    var side = el("div", "side diff");
    var a = el("div", "now");
    a.appendChild(el("strong", null, retriever + " now"));
    a.appendChild(rankList(data, q, now, base, "now"));
    side.appendChild(a);
    if (base) {
      var b = el("div", "baseline");
      b.appendChild(el("strong", null, retriever + " in the baseline"));
      b.appendChild(rankList(data, q, base, now, "base"));
      side.appendChild(b);
    }
    panel.appendChild(side);
  }
  function cellValue(td) {
    var v = td.getAttribute("data-v");
    if (v === null) return td.textContent.toLowerCase();
    var x = parseFloat(v);
    return isNaN(x) ? -Infinity : x;
  }
  function setup(box) {
    var data = JSON.parse(box.querySelector("script.qdata").textContent);
    var table = box.querySelector("table.queries");
    var tbody = table.tBodies[0];
    var search = box.querySelector("input[type=search]");
    var dropped = box.querySelector("input.dropped");
    var select = box.querySelector("select.retriever");
    var count = box.querySelector(".count");
    var selected = null;
    function filter() {
      var text = search.value.trim().toLowerCase();
      var col = select.value;
      var shown = 0;
      Array.prototype.forEach.call(tbody.rows, function (tr) {
        var ok = !text || tr.textContent.toLowerCase().indexOf(text) >= 0;
        if (ok && dropped.checked) {
          var d = parseFloat(tr.getAttribute("data-d-" + col));
          ok = !isNaN(d) && d < 0;
        }
        tr.hidden = !ok;
        if (ok) shown += 1;
      });
      count.textContent = shown + " of " + tbody.rows.length + " queries";
    }
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, i) {
      th.addEventListener("click", function () {
        var asc = !th.classList.contains("sorted-asc");
        Array.prototype.forEach.call(table.tHead.rows[0].cells, function (h) { h.classList.remove("sorted-asc", "sorted-desc"); });
        th.classList.add(asc ? "sorted-asc" : "sorted-desc");
        var rows = Array.prototype.slice.call(tbody.rows);
        rows.sort(function (r1, r2) {
          var a = cellValue(r1.cells[i]), b = cellValue(r2.cells[i]);
          if (a < b) return asc ? -1 : 1;
          if (a > b) return asc ? 1 : -1;
          return 0;
        });
        rows.forEach(function (r) { tbody.appendChild(r); });
      });
    });
    tbody.addEventListener("click", function (ev) {
      var tr = ev.target.closest("tr");
      if (!tr) return;
      if (selected) selected.classList.remove("selected");
      selected = tr;
      tr.classList.add("selected");
      showQuery(box, data, tr.getAttribute("data-qid"));
    });
    search.addEventListener("input", filter);
    dropped.addEventListener("change", filter);
    select.addEventListener("change", function () {
      filter();
      if (selected) showQuery(box, data, selected.getAttribute("data-qid"));
    });
    filter();
  }
  document.querySelectorAll(".qbox").forEach(setup);
})();
