/* benchfoundry item explorer: a table of items, item pages and model pages over the data files
   in data/ (docs/explore.md). Runs from file:// with no server and no network. Every element is
   made with DOM calls; text from data is set with textContent only, never parsed as markup. */
(function () {
  "use strict";

  var PAGE = 50;
  var FIRST = 20;  // rows drawn before a filter returns: more than a screen holds
  var COL = 22;  // a model's column, in pixels
  var BINS = { tough: 0, hard: 1, medium: 2, easy: 3 };
  var WORDS = { R: "right", W: "wrong", U: "unparsed", F: "failed", "-": "not asked" };
  var S = {
    meta: null, rows: [], items: {}, loading: {}, shown: [], page: 0, drawn: 0,
    filters: { dim: "", lang: "", bin: "", model: "", outcome: "", disagree: false, suspect: false, allWrong: false, text: "" },
    sort: { key: "n", dir: 1 }
  };

  window.BFDATA = {
    put: function (kind, n, value) {
      if (kind === "meta") S.meta = value;
      else if (kind === "rows") S.rows[n] = value;
      else if (kind === "items") value.forEach(function (it) { S.items[it.qid] = it; });
    }
  };

  // --- tiny DOM helpers: text always through textContent -------------------------------------
  function el(tag, attrs, children) {
    var e = document.createElement(tag);
    if (attrs) Object.keys(attrs).forEach(function (k) {
      var v = attrs[k];
      if (v === null || v === undefined || v === false) return;
      if (k === "text") e.textContent = String(v);
      else if (k === "cls") e.className = v;
      else if (k.slice(0, 2) === "on") e.addEventListener(k.slice(2), v);
      else e.setAttribute(k, v === true ? "" : String(v));
    });
    (children || []).forEach(function (c) {
      if (c === null || c === undefined) return;
      e.appendChild(typeof c === "string" ? document.createTextNode(c) : c);
    });
    return e;
  }
  function svg(tag, attrs) {
    var e = document.createElementNS("http://www.w3.org/2000/svg", tag);
    Object.keys(attrs || {}).forEach(function (k) { e.setAttribute(k, String(attrs[k])); });
    return e;
  }
  function clear(node) { while (node.firstChild) node.removeChild(node.firstChild); return node; }
  function view() { return clear(document.getElementById("view")); }
  function num(x, digits) { return x === null || x === undefined ? "" : Number(x).toFixed(digits === undefined ? 2 : digits); }
  function pct(a, b) { return b ? (100 * a / b).toFixed(1) + "%" : "–"; }
  function link(href, text) { return el("a", { href: href, text: text }); }
  function itemHref(row) { return "#/item/" + encodeURIComponent(row.q) + "/" + encodeURIComponent(row.lang); }

  function load(src) {
    return new Promise(function (resolve, reject) {
      var s = document.createElement("script");
      s.src = src;
      s.onload = function () { resolve(); };
      s.onerror = function () { reject(new Error("cannot load " + src)); };
      document.head.appendChild(s);
    });
  }
  function pad(n) { return ("00" + n).slice(-3); }

  // --- the rows: flattened, with what the filters need computed once --------------------------
  function prepare() {
    var all = [];
    S.rows.forEach(function (chunk) { Array.prototype.push.apply(all, chunk); });
    all.forEach(function (r, i) {
      var right = 0, asked = 0;
      for (var k = 0; k < r.o.length; k++) {
        var c = r.o.charCodeAt(k);
        if (c !== 45) { asked++; if (c === 82) right++; }  // '-', 'R'
      }
      r.i = i; r.right = right; r.asked = asked;
      r.binRank = r.bin in BINS ? BINS[r.bin] : 9;
    });
    S.all = all;
  }

  function matches(r, f, model, text) {
    if (f.dim && r.dim !== f.dim) return false;
    if (f.lang && r.lang !== f.lang) return false;
    if (f.bin && r.bin !== f.bin) return false;
    if (model >= 0 && f.outcome) {
      var o = r.o.charAt(model);
      if (f.outcome === "X" ? (o === "R" || o === "-") : o !== f.outcome) return false;
    }
    if (f.disagree && !(r.right > 0 && r.right < r.asked)) return false;
    if (f.allWrong && !(r.asked > 0 && r.right === 0)) return false;
    if (f.suspect && !r.suspect) return false;
    if (text && r.search.indexOf(text) < 0) return false;
    return true;
  }

  function compare(key, dir) {
    return function (a, b) {
      var x = a[key], y = b[key];
      var xn = x === null || x === undefined, yn = y === null || y === undefined;
      if (xn || yn) return xn === yn ? a.i - b.i : (xn ? 1 : -1);  // missing last, either way
      if (x < y) return -dir;
      if (x > y) return dir;
      return a.i - b.i;
    };
  }

  function apply() {
    var f = S.filters, model = f.model === "" ? -1 : Number(f.model);
    var text = f.text.trim().toLowerCase();
    var out = [];
    for (var i = 0; i < S.all.length; i++) if (matches(S.all[i], f, model, text)) out.push(S.all[i]);
    if (S.sort.key !== "n" || S.sort.dir !== 1) out.sort(compare(S.sort.key, S.sort.dir));
    S.shown = out;
    S.page = Math.min(S.page, Math.max(0, Math.ceil(out.length / PAGE) - 1));
    drawRows();
  }

  // --- the table's state in the address: a filtered view can be bookmarked, shared, reloaded ------
  var SORTS = ["n", "id", "dim", "binRank", "lang", "key", "text", "right", "diff", "disc", "suspect"];
  function tableHash() {
    var q = [];
    Object.keys(S.filters).forEach(function (k) {
      var v = S.filters[k];
      if (v !== "" && v !== false) q.push(k + "=" + encodeURIComponent(v === true ? "1" : v));
    });
    if (S.sort.key !== "n" || S.sort.dir !== 1) q.push("sort=" + S.sort.key + (S.sort.dir < 0 ? ":desc" : ""));
    if (S.page) q.push("page=" + (S.page + 1));
    return "#/" + (q.length ? "?" + q.join("&") : "");
  }
  function readTableHash() {
    var f = { dim: "", lang: "", bin: "", model: "", outcome: "", disagree: false, suspect: false, allWrong: false, text: "" };
    var sort = { key: "n", dir: 1 }, page = 0;
    (location.hash.split("?")[1] || "").split("&").forEach(function (kv) {
      var at = kv.indexOf("="), k = kv.slice(0, at), v;
      if (at < 0) return;
      try { v = decodeURIComponent(kv.slice(at + 1)); } catch (e) { return; }
      if (Object.prototype.hasOwnProperty.call(f, k)) f[k] = typeof f[k] === "boolean" ? v === "1" : v;
      else if (k === "sort" && SORTS.indexOf(v.split(":")[0]) >= 0) sort = { key: v.split(":")[0], dir: v.split(":")[1] === "desc" ? -1 : 1 };
      else if (k === "page") page = Math.max(0, (parseInt(v, 10) || 1) - 1);
    });
    S.filters = f; S.sort = sort; S.page = page;
  }

  // --- the table --------------------------------------------------------------------------------
  function select(name, values, labels, current) {
    var s = el("select", { id: "f-" + name, "data-filter": name });
    s.appendChild(el("option", { value: "", text: "all" }));
    values.forEach(function (v, i) {
      var o = el("option", { value: v, text: labels ? labels[i] : v });
      if (String(v) === String(current)) o.selected = true;
      s.appendChild(o);
    });
    s.addEventListener("change", function () { S.filters[name] = s.value; S.page = 0; apply(); });
    return s;
  }
  function check(name, text) {
    var c = el("input", { type: "checkbox", id: "f-" + name, "data-filter": name });
    c.checked = S.filters[name];
    c.addEventListener("change", function () { S.filters[name] = c.checked; S.page = 0; apply(); });
    return el("label", null, [c, " " + text]);
  }

  function drawTable() {
    var m = S.meta, v = view();
    var search = el("input", { type: "search", id: "f-text", placeholder: "text, options or id", value: S.filters.text });
    search.addEventListener("input", function () { S.filters.text = search.value; S.page = 0; apply(); });
    var models = m.models.map(function (_, i) { return i; });
    var labels = m.models.map(function (x) { return x.label; });
    var outcomes = el("select", { id: "f-outcome", "data-filter": "outcome" }, [
      el("option", { value: "", text: "any answer" }), el("option", { value: "R", text: "right" }),
      el("option", { value: "X", text: "not right" }), el("option", { value: "W", text: "wrong" }),
      el("option", { value: "U", text: "unparsed" }), el("option", { value: "F", text: "failed" })
    ]);
    outcomes.value = S.filters.outcome;
    outcomes.addEventListener("change", function () { S.filters.outcome = outcomes.value; S.page = 0; apply(); });
    v.appendChild(el("div", { cls: "filters" }, [
      el("label", null, ["search ", search]),
      el("label", null, ["dimension ", select("dim", m.dimensions, null, S.filters.dim)]),
      el("label", null, ["language ", select("lang", m.languages, null, S.filters.lang)]),
      el("label", null, ["bin ", select("bin", m.bins, null, S.filters.bin)]),
      m.models.length ? el("label", null, ["model ", select("model", models, labels, S.filters.model), " ", outcomes]) : null,
      m.models.length ? check("disagree", "models disagree") : null,
      m.models.length ? check("allWrong", "every model wrong") : null,
      check("suspect", "suspect")
    ]));
    m.notes.forEach(function (n) { v.appendChild(el("p", { cls: "note", text: n })); });
    if (m.models.some(function (x) { return x.in_build.length; })) {
      v.appendChild(el("p", { cls: "note", text: "† took part in building the release (its score there may be biased; the model's page says how)" }));
    }
    if (m.models.length) {
      v.appendChild(el("p", { cls: "note" }, ["Models: "].concat(m.models.map(function (x, i) {
        return el("span", null, [link("#/model/" + i, x.label), i < m.models.length - 1 ? " · " : ""]);
      }))));
    }
    v.appendChild(el("div", { id: "count", cls: "count" }));
    var head = el("tr");
    function th(key, text, cls, title) {
      var h = el("th", { cls: cls, title: title, "data-sort": key, text: text + (S.sort.key === key ? (S.sort.dir > 0 ? " ▲" : " ▼") : "") });
      h.addEventListener("click", function () {
        S.sort = { key: key, dir: S.sort.key === key ? -S.sort.dir : 1 };
        drawTable();
      });
      return h;
    }
    head.appendChild(el("th", { text: "" }));
    [["n", "#"], ["id", "item"], ["dim", "dimension"], ["binRank", "bin"], ["lang", "lang"], ["key", "key"], ["text", "question"]]
      .forEach(function (c) { head.appendChild(th(c[0], c[1])); });
    m.models.forEach(function (x) {  // † a model that took part in building the release
      var built = x.in_build.length ? "† " : "";
      head.appendChild(el("th", { cls: "model", title: x.label + (built ? "; in the build: " + x.in_build.join("; ") : ""), text: built + x.label }));
    });
    head.appendChild(th("right", "right"));
    head.appendChild(th("diff", "difficulty", null, "IRT difficulty"));
    head.appendChild(th("disc", "discrim.", null, "IRT discrimination"));
    head.appendChild(th("suspect", "suspect"));
    // fixed widths: the browser lays out a page of rows without measuring every cell
    var widths = [52, 48, 150, 170, 56, 40, 36, 300].concat(m.models.map(function () { return COL; }), [52, 80, 72, 76]);
    var cols = el("colgroup", null, widths.map(function (w) { var c = el("col"); c.style.width = w + "px"; return c; }));
    var table = el("table", { cls: "items", id: "items" }, [cols, el("thead", null, [head]), el("tbody", { id: "rows" })]);
    table.style.width = widths.reduce(function (a, b) { return a + b; }, 0) + "px";
    v.appendChild(el("div", { cls: "scroller" }, [table]));
    v.appendChild(el("div", { cls: "pager", id: "pager" }));
    apply();
  }

  // The models' outcomes of a row in one cell: a colour per model's column (a CSS gradient) and
  // its letter, each in a column's width; far fewer elements to lay out than a cell per model.
  var COLOURS = { R: "#c9efcf", W: "#f8c9c5", U: "#fde7a9", F: "#d9d2ef", "-": "#f2f2f2" };
  function strip(td, o) {
    var stops = [], said = [];
    for (var k = 0; k < o.length; k++) {
      var c = o.charAt(k);
      stops.push(COLOURS[c] + " " + k * COL + "px " + (k + 1) * COL + "px");
      said.push(S.meta.models[k].label + ": " + WORDS[c]);
    }
    td.style.backgroundImage = "linear-gradient(to right," + stops.join(",") + ")";
    td.title = said.join("\n");
    td.setAttribute("data-o", o);
    td.textContent = o.replace(/-/g, " ");
  }

  function drawRows() {
    var body = document.getElementById("rows");
    if (!body) return;
    var frag = document.createDocumentFragment();
    var start = S.page * PAGE, rows = S.shown.slice(start, start + PAGE), n = S.meta.models.length;
    var thumbs = [];
    var proto = document.createElement("tr");  // cloned per row: cheaper than building each
    for (var c = 0; c < 13; c++) proto.appendChild(document.createElement("td"));
    if (n) { proto.children[8].colSpan = n; proto.children[8].className = "strip"; }
    else proto.children[8].hidden = true;
    function add(r, into) {
      var tr = proto.cloneNode(true), td = tr.children;
      tr.setAttribute("data-id", r.id);
      if (r.thumb) thumbs.push([td[0], r]);
      td[1].textContent = r.n;
      td[2].appendChild(link(itemHref(r), r.id));
      td[3].textContent = r.dim;
      td[4].textContent = r.bin || "";
      td[5].textContent = r.lang;
      td[6].textContent = r.key;
      td[7].className = "q"; td[7].title = r.text; td[7].textContent = r.text;
      if (n) strip(td[8], r.o);
      td[9].textContent = r.asked ? r.right + "/" + r.asked : "";
      td[10].textContent = num(r.diff);
      td[11].textContent = num(r.disc);
      td[12].className = "suspect"; td[12].textContent = r.suspect || "";
      into.appendChild(tr);
    }
    // a screenful first, so that a filter answers at once; the rest of the page and the
    // thumbnails in the next task (unless the table changed again meanwhile)
    rows.slice(0, FIRST).forEach(function (r) { add(r, frag); });
    clear(body).appendChild(frag);
    var drawn = ++S.drawn;
    setTimeout(function () {
      if (drawn !== S.drawn) return;
      var rest = document.createDocumentFragment();
      rows.slice(FIRST).forEach(function (r) { add(r, rest); });
      body.appendChild(rest);
      thumbs.forEach(function (x) {
        x[0].appendChild(el("img", { cls: "thumb", src: x[1].thumb, loading: "lazy", alt: x[1].clip ? "clip" : "image" }));
      });
    }, 0);
    var pages = Math.max(1, Math.ceil(S.shown.length / PAGE));
    document.getElementById("count").textContent = S.shown.length + " of " + S.all.length + " rows";
    var pager = clear(document.getElementById("pager"));
    pager.appendChild(el("button", { text: "previous", disabled: S.page === 0, onclick: function () { S.page--; drawRows(); } }));
    pager.appendChild(el("span", { text: "page " + (S.page + 1) + " of " + pages }));
    pager.appendChild(el("button", { text: "next", disabled: S.page >= pages - 1, onclick: function () { S.page++; drawRows(); } }));
    S.tableHash = tableHash();  // "← the table" comes back to this view
    if (location.hash !== S.tableHash) {
      try { history.replaceState(null, "", S.tableHash); } catch (e) { /* a browser that refuses it keeps the view in memory */ }
    }
    if (!S.readyAt) S.readyAt = performance.now();  // the bench's "open" figure
    document.body.setAttribute("data-ready", "table");
  }

  // --- an item's page ---------------------------------------------------------------------------
  function withItem(qid, then) {
    if (S.items[qid]) return then(S.items[qid]);
    var row = S.all.find(function (r) { return r.q === qid; });
    if (!row) { view().appendChild(el("p", { text: "No item " + qid + " in this explorer." })); return; }
    var chunk = Math.floor(row.n / S.meta.items_per_chunk);
    S.loading[chunk] = S.loading[chunk] || load("data/items-" + pad(chunk) + ".js");
    S.loading[chunk].then(function () { then(S.items[qid]); });
  }

  function media(it) {
    var box = el("div", { cls: "media" });
    if (it.clip) {
      var c = it.clip, start = c.start || 0, end = c.end;
      var video = el("video", { id: "clip", controls: true, preload: "metadata", poster: it.image, "data-start": start, "data-end": end === null ? "" : end });
      video.src = c.src + "#t=" + start + (end === null ? "" : "," + end);
      // only the stretch the question may show: start there, stop at its end
      video.addEventListener("play", function () { if (video.currentTime < start || (end !== null && video.currentTime >= end)) video.currentTime = start; });
      video.addEventListener("timeupdate", function () {
        if (end !== null && video.currentTime >= end) { video.pause(); video.currentTime = end; }
      });
      box.appendChild(video);
      return box;
    }
    if (!it.image) return el("p", { cls: "note", text: "No image in the data." });
    box.appendChild(el("img", { src: it.image, alt: "the item's image", id: "image" }));
    if (it.shapes.length && it.width) {
      var s = svg("svg", { viewBox: "0 0 " + it.width + " " + it.height, preserveAspectRatio: "none", id: "evidence-overlay" });
      it.shapes.forEach(function (sh) {
        var b = sh.box;
        s.appendChild(svg("rect", { x: b[0], y: b[1], width: b[2] - b[0], height: b[3] - b[1] }));
        var t = svg("text", { x: b[0] + 2, y: Math.max(14, b[1] - 3) });
        t.textContent = sh.label;
        s.appendChild(t);
      });
      box.appendChild(s);
    }
    return box;
  }

  function texts(it) {
    var langs = Object.keys(it.texts).sort(function (a, b) { return a === "en" ? -1 : b === "en" ? 1 : a < b ? -1 : 1; });
    return el("div", { cls: "languages" }, langs.map(function (lang) {
      var t = it.texts[lang];
      var lang_attr = lang === "zh" ? "zh-CN" : lang;
      return el("div", { lang: lang_attr, "data-language": lang }, [
        el("h3", { text: lang }),
        t.hint ? el("p", { cls: "hint", text: t.hint }) : null,
        el("p", { cls: "question", text: t.question }),
        el("ol", null, t.options.map(function (o, i) {
          var letter = String.fromCharCode(65 + i);
          return el("li", { cls: letter === it.key ? "key" : null }, [letter + ". ", el("span", { text: o }), letter === it.key ? " ✓ key" : ""]);
        }))
      ]);
    }));
  }

  function answers(it, lang) {
    var models = S.meta.models;
    if (!models.length) return el("p", { cls: "note", text: "No model answers in this explorer." });
    var rows = [el("tr", null, ["model", "language", "pass", "options shown", "reply", "read as", "verdict"].map(function (h) { return el("th", { text: h }); }))];
    // the languages someone was asked in (the build's judgements are of English items only)
    Object.keys(it.texts).filter(function (l) {
      return Object.keys(it.answers[l] || {}).length || Object.keys(it.failures[l] || {}).length;
    }).forEach(function (l) {
      models.forEach(function (m, i) {
        var passes = (it.answers[l] || {})[i] || [], failure = (it.failures[l] || {})[i];
        if (!passes.length) {
          rows.push(el("tr", { "data-model": i, "data-language": l }, [el("td", { text: m.label }), el("td", { text: l }), el("td"), el("td"),
            el("td", { cls: "reply", text: failure ? "call failed: " + failure : "not asked" }), el("td"), el("td", { cls: failure ? "F" : "N", text: failure ? "failed" : "not asked" })]));
        }
        passes.forEach(function (p) {
          var shownAt = p.extracted && p.extracted !== "Z" ? p.extracted.charCodeAt(0) - 65 : -1;
          var original = shownAt >= 0 && shownAt < p.order.length ? p.order[shownAt] : null;
          var read = p.extracted === null ? "nothing" : p.extracted === "Z" ? "Z (no option)" : p.extracted + (original && original !== p.extracted ? " = option " + original : "");
          var verdict = p.correct ? "R" : (p.extracted === null || p.extracted === "Z" ? "U" : "W");
          rows.push(el("tr", { "data-model": i, "data-language": l, "data-pass": p.index, cls: l === lang ? "current" : null }, [
            el("td", { text: m.label }), el("td", { text: l }), el("td", { text: p.index }),
            el("td", { text: p.order.join(" ") }), el("td", { cls: "reply", text: p.response === null ? "" : p.response }),
            el("td", { text: read }), el("td", { cls: verdict, text: WORDS[verdict] })
          ]));
        });
      });
    });
    return el("table", { cls: "plain", id: "answers" }, rows);
  }

  function analysis(it) {
    var langs = Object.keys(it.analysis);
    var out = [];
    var rel = it.release || {};
    var facts = [["dimension", it.dimension], ["difficulty bin", it.bin], ["key", it.key], ["source", rel.source],
      ["hits (text-only / vision, quality control)", rel.hits_text === undefined ? null : rel.hits_text + " / " + rel.hits_vlm],
      ["released by", rel.review_state ? rel.review_decision + " (" + rel.review_state + ", " + (rel.reviewers || []).join(", ") + ")" : null]];
    out.push(el("table", { cls: "plain" }, facts.filter(function (f) { return f[1] !== null && f[1] !== undefined; })
      .map(function (f) { return el("tr", null, [el("th", { text: f[0] }), el("td", { text: f[1] })]); })));
    if (langs.length) {
      var rows = [el("tr", null, ["language", "right", "difficulty", "discrimination", "suspect", "why"].map(function (h) { return el("th", { text: h }); }))];
      langs.forEach(function (l) {
        var a = it.analysis[l];
        rows.push(el("tr", { "data-language": l }, [el("td", { text: l }), el("td", { text: a.respondents ? a.right + "/" + a.respondents : "" }),
          el("td", { text: num(a.difficulty) }), el("td", { text: num(a.discrimination) }),
          el("td", { cls: "suspect", text: a.suspect ? a.suspect_kind || "yes" : "" }), el("td", { text: a.why || "" })]));
      });
      out.push(el("table", { cls: "plain", id: "analysis" }, rows));
    } else out.push(el("p", { cls: "note", text: "No item analysis (it comes with an evaluation)." }));
    return out;
  }

  function reviews(it) {
    if (!it.reviews.length) return el("p", { cls: "note", text: "No review history in this explorer's data." });
    var rows = [el("tr", null, ["when", "who", "language", "decision", "changed", "why"].map(function (h) { return el("th", { text: h }); }))];
    it.reviews.forEach(function (r) {
      var changed = Object.keys(r.changes).map(function (k) { var v = r.changes[k]; return k + ": " + (Array.isArray(v) ? v.join(" | ") : v); }).join("; ");
      rows.push(el("tr", null, [el("td", { text: r.at }), el("td", { text: r.who + (r.role ? " (" + r.role + ")" : "") + " via " + r.tool }),
        el("td", { text: r.language }), el("td", { text: r.decision + (r.adjudication ? " (adjudication)" : "") }),
        el("td", { text: changed }), el("td", { text: r.why })]));
    });
    return el("table", { cls: "plain", id: "reviews" }, rows);
  }

  function drawItem(qid, lang) {
    view().appendChild(el("p", { text: "Loading " + qid + "…" }));
    withItem(qid, function (it) {
      var v = view();
      var at = S.shown.findIndex(function (r) { return r.q === qid && r.lang === lang; });
      var nav = el("p", null, [link(S.tableHash || "#/", "← the table")]);
      S.prev = at > 0 ? itemHref(S.shown[at - 1]) : null;
      S.next = at >= 0 && at < S.shown.length - 1 ? itemHref(S.shown[at + 1]) : null;
      if (S.prev) nav.appendChild(el("span", null, [" · ", link(S.prev, "previous (k)")]));
      if (S.next) nav.appendChild(el("span", null, [" · ", link(S.next, "next (j)")]));
      if (at >= 0) nav.appendChild(el("span", { cls: "note", text: "  " + (at + 1) + " of " + S.shown.length + " in the table's filter and order" }));
      v.appendChild(nav);
      v.appendChild(el("h1", { text: qid + (lang && lang !== "en" ? " @" + lang : "") }));
      v.appendChild(el("section", null, [el("h2", { text: it.clip ? "Clip (plays only the stretch the question may show)" : "Image, with the facts the key rests on" }), media(it)]));
      v.appendChild(el("section", { id: "texts" }, [el("h2", { text: "Question and options, every language" }), texts(it)]));
      var ev = el("section", { id: "evidence" }, [el("h2", { text: "What the key rests on" })]);
      if (it.evidence.length) ev.appendChild(el("ol", null, it.evidence.map(function (e) { return el("li", { text: e }); })));  // numbered as on the image
      else ev.appendChild(el("p", { cls: "note", text: "No evidence recorded for this item." }));
      v.appendChild(ev);
      v.appendChild(el("section", null, [el("h2", { text: "Every model's reply, per pass" }), answers(it, lang)]));
      v.appendChild(el("section", null, [el("h2", { text: "Item analysis" })].concat(analysis(it))));
      v.appendChild(el("section", null, [el("h2", { text: "Review history" }), reviews(it)]));
      document.body.setAttribute("data-ready", "item");
    });
  }

  // --- a model's page ---------------------------------------------------------------------------
  function tally(rows, m, by) {
    var out = {};
    rows.forEach(function (r) {
      var o = r.o.charAt(m);
      if (o === "-") return;
      var k = by(r) || "(none)";
      var t = out[k] = out[k] || { n: 0, R: 0, W: 0, U: 0, F: 0 };
      t.n++; t[o]++;
    });
    return out;
  }
  function bar(share) {
    var b = el("span", { cls: "bar" });
    b.style.width = Math.round(60 * share) + "px";  // CSSOM: the page allows no inline styles
    return b;
  }
  function tallyTable(title, t) {
    var rows = [el("tr", null, [title, "asked", "right", "accuracy", "wrong", "unparsed", "failed"].map(function (h) { return el("th", { text: h }); }))];
    Object.keys(t).sort().forEach(function (k) {
      var x = t[k];
      rows.push(el("tr", null, [el("td", { text: k }), el("td", { text: x.n }), el("td", { text: x.R }),
        el("td", null, [bar(x.R / x.n), " " + pct(x.R, x.n)]),
        el("td", { text: x.W }), el("td", { text: x.U }), el("td", { text: x.F })]));
    });
    return el("table", { cls: "plain" }, rows);
  }
  function list(rows, id, limit) {
    var shown = rows.slice(0, limit);
    var ul = el("ul", { id: id }, shown.map(function (r) {
      return el("li", null, [link(itemHref(r), r.id), " ", el("span", { text: r.dim + " · " + (r.bin || "") + " · " + r.text })]);
    }));
    return rows.length > limit ? el("div", null, [ul, el("p", { cls: "note", text: (rows.length - limit) + " more not listed" })]) : ul;
  }

  // exact McNemar: two-sided binomial test of b against b + c discordant pairs at 1/2
  function mcnemar(b, c) {
    var n = b + c, k = Math.min(b, c), term = Math.pow(0.5, n), sum = 0;
    if (n === 0) return 1;
    if (n > 1000) {  // 0.5^n underflows: sum in logs
      var lf = function (x) { var t = 0; for (var i = 2; i <= x; i++) t += Math.log(i); return t; };
      var base = lf(n) - n * Math.LN2;
      for (var j = 0; j <= k; j++) sum += Math.exp(base - lf(j) - lf(n - j));
    } else {
      for (var i = 0; i <= k; i++) { sum += term; term = term * (n - i) / (i + 1); }
    }
    return Math.min(1, 2 * sum);
  }

  function drawModel(m, other, lang) {
    var models = S.meta.models, me = models[m];
    var v = view();
    if (!me) { v.appendChild(el("p", { text: "No such model." })); return; }
    var langs = S.meta.languages;
    lang = lang || (langs.length > 1 ? langs[0] : "all");
    function hashFor(o, l) { return "#/model/" + m + "/" + l + (o !== null && o !== "" ? "/vs/" + o : ""); }
    var rows = lang === "all" ? S.all : S.all.filter(function (r) { return r.lang === lang; });
    v.appendChild(el("p", null, [link(S.tableHash || "#/", "← the table")]));
    v.appendChild(el("h1", { text: me.label }));
    if (me.served_at) v.appendChild(el("p", { cls: "note", text: "served at " + me.served_at }));
    if (me.in_build.length) v.appendChild(el("p", { cls: "note", text: "In the build: " + me.in_build.join("; ") }));
    if (langs.length > 1) {
      var pickLang = el("select", { id: "model-language" }, langs.map(function (l) {
        return el("option", { value: l, text: l, selected: l === lang });
      }).concat([el("option", { value: "all", text: "all languages, pooled", selected: lang === "all" })]));
      pickLang.addEventListener("change", function () { location.hash = hashFor(other, pickLang.value); });
      v.appendChild(el("p", null, ["Language (each its own board): ", pickLang]));
    }
    v.appendChild(el("section", null, [el("h2", { text: "By dimension" }), tallyTable("dimension", tally(rows, m, function (r) { return r.dim; }))]));
    v.appendChild(el("section", null, [el("h2", { text: "By difficulty bin" }), tallyTable("bin", tally(rows, m, function (r) { return r.bin; }))]));
    var errors = rows.filter(function (r) { var o = r.o.charAt(m); return o === "W" || o === "U" || o === "F"; });
    errors.sort(function (a, b) { return b.right - a.right || a.i - b.i; });  // what most others get right first
    v.appendChild(el("section", null, [el("h2", { text: "Its errors (" + errors.length + "), those most other models get right first" }), list(errors, "errors", 200)]));
    var pick = el("select", { id: "compare" }, [el("option", { value: "", text: "compare with…" })].concat(models.map(function (x, i) {
      return i === m ? null : el("option", { value: i, text: x.label, selected: i === other });
    })));
    pick.addEventListener("change", function () { location.hash = hashFor(pick.value, lang); });
    var cmp = el("section", { id: "comparison" }, [el("h2", { text: "Compared with another model: McNemar's discordant pairs" }), pick]);
    if (other !== null && models[other]) {
      var you = models[other].label;
      var both = rows.filter(function (r) { return r.o.charAt(m) !== "-" && r.o.charAt(other) !== "-"; });
      var onlyMe = both.filter(function (r) { return r.o.charAt(m) === "R" && r.o.charAt(other) !== "R"; });
      var onlyOther = both.filter(function (r) { return r.o.charAt(m) !== "R" && r.o.charAt(other) === "R"; });
      cmp.appendChild(el("p", { id: "mcnemar", text: both.length + " items both were asked (" + (lang === "all" ? "all languages, pooled" : lang) + "): " + onlyMe.length +
        " right only for " + me.label + ", " + onlyOther.length + " right only for " + you + "; exact McNemar p = " +
        mcnemar(onlyMe.length, onlyOther.length).toPrecision(3) + " (not adjusted for other comparisons; the report's are Holm-adjusted)" }));
      cmp.appendChild(el("h3", { text: "Right for " + me.label + ", not for " + you + " (" + onlyMe.length + ")" }));
      cmp.appendChild(list(onlyMe, "only-this", 500));
      cmp.appendChild(el("h3", { text: "Right for " + you + ", not for " + me.label + " (" + onlyOther.length + ")" }));
      cmp.appendChild(list(onlyOther, "only-other", 500));
    }
    v.appendChild(cmp);
    document.body.setAttribute("data-ready", "model");
  }

  // --- routes -----------------------------------------------------------------------------------
  function route() {
    document.body.removeAttribute("data-ready");
    var parts = location.hash.replace(/^#\/?/, "").split("/").map(decodeURIComponent);
    if (parts[0] === "item" && parts[1]) return drawItem(parts[1], parts[2] || "en");
    if (parts[0] === "model" && parts[1] !== undefined) {  // #/model/<i>[/<language>][/vs/<j>]
      var lang = parts[2] && parts[2] !== "vs" ? parts[2] : null, vs = parts.indexOf("vs");
      return drawModel(Number(parts[1]), vs > 0 ? Number(parts[vs + 1]) : null, lang);
    }
    readTableHash();
    drawTable();
    window.scrollTo(0, 0);
  }

  function start() {
    var m = S.meta;
    document.getElementById("title").textContent = m.title + " · " + m.items + " items";
    document.title = m.title + " · benchfoundry explorer";
    var links = document.getElementById("links");
    Object.keys(m.links).forEach(function (k) { links.appendChild(link(m.links[k], k)); });
    prepare();
    window.addEventListener("hashchange", route);
    document.addEventListener("keydown", function (e) {  // an item's page: j next, k previous, Escape the table
      if (document.body.getAttribute("data-ready") !== "item" || e.target.tagName === "INPUT" || e.target.tagName === "SELECT") return;
      if (e.key === "j" && S.next) location.hash = S.next;
      else if (e.key === "k" && S.prev) location.hash = S.prev;
      else if (e.key === "Escape") location.hash = S.tableHash || "#/";
    });
    route();
  }

  load("data/meta.js").then(function () {
    var chunks = [];
    for (var i = 0; i < S.meta.row_chunks; i++) chunks.push(load("data/rows-" + pad(i) + ".js"));
    return Promise.all(chunks);
  }).then(start, function (e) {
    view().appendChild(el("p", { text: "The data did not load: " + e.message }));
  });
  window.BFEXPLORER = S;  // for the bench and the tests: the state, read only
})();
