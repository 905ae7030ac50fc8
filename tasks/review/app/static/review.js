// A batch's page: keyboard decisions, each saved at once through POST /api/reviews; j/k cross
// to the next or previous page of a long batch; o and z call the desk (desk.js) for the evidence
// overlay and the zoom. Text from data is only ever set with textContent, never as HTML.
(function () {
  "use strict";
  const desk = window.BenchDesk;
  const main = document.getElementById("samples");
  if (!main) return;
  const batch = main.dataset.batch, reviewer = main.dataset.reviewer;
  const samples = () => Array.from(document.querySelectorAll(".sample")).filter((s) => !s.hidden);
  const started = new Map();
  let waitingLetter = null;

  function current() {
    const focused = document.activeElement && document.activeElement.closest(".sample");
    return focused || samples()[0];
  }
  function focus(sample) { if (sample) { sample.focus(); started.set(sample, started.get(sample) || Date.now()); } }
  function move(step) {
    const list = samples(), index = list.indexOf(current()), next = index + step;
    const link = document.querySelector(step > 0 ? 'nav.pages a[rel="next"]' : 'nav.pages a[rel="prev"]');
    if ((next >= list.length || next < 0) && link) {  // the next or previous page of the batch
      window.location.href = link.href + (step < 0 ? "#last" : "");
      return;
    }
    focus(list[Math.max(0, Math.min(list.length - 1, next))]);
  }
  function closeForms(sample) { sample.querySelectorAll("form").forEach((f) => { f.hidden = true; }); }

  async function decide(sample, body) {
    const message = sample.querySelector(".message");
    message.textContent = "saving...";
    const lead = started.has(sample) ? (Date.now() - started.get(sample)) / 1000 : null;
    const payload = Object.assign({ question_id: sample.dataset.question, reviewer, batch_id: batch, lead_time_s: lead }, body);
    const response = await fetch("/api/reviews", {
      method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(payload),
    });
    const result = await response.json();
    if (!response.ok) { message.textContent = result.error; return false; }
    message.textContent = "";
    closeForms(sample);
    let text = "decided: " + body.decision;
    if (body.new_answer) text += " answer " + body.new_answer;
    if (body.new_dimension) text += " to " + body.new_dimension;
    if (body.reason) text += " (" + body.reason + ")";
    showDecided(sample, body);
    const line = sample.querySelector(".current");
    line.textContent = "";
    const b = document.createElement("b"); b.textContent = text; line.appendChild(b);
    if (!sample.classList.contains("decided")) {
      sample.classList.add("decided");
      const progress = document.getElementById("progress");
      const done = Number(progress.dataset.decided) + 1;  // over the whole batch, every page
      progress.dataset.decided = String(done);
      progress.textContent = done + " of " + progress.dataset.total + " decided";
    }
    filter();
    return true;
  }

  // Each sample's text and key as written (before any decision of this reviewer's): the page
  // shows them as the reviewer's current decision leaves them, and "as written" folds the rest.
  const written = new Map();
  document.querySelectorAll(".sample").forEach((sample) => {
    const item = sample.querySelector(".item"), before = sample.querySelector(".as-written");
    written.set(sample, before ? {
      question: before.querySelector(".question").textContent,
      options: Array.from(before.querySelectorAll(".written-text")).map((span) => span.textContent),
      answer: before.dataset.answer,
    } : {
      question: item.querySelector(".question").textContent,
      options: Array.from(item.querySelectorAll(".option-text")).map((span) => span.textContent),
      answer: sample.dataset.answer,
    });
  });

  // The sample's text and key as the decision just saved leaves them (an edit's text, a fixed
  // key; any other decision: as written).
  function showDecided(sample, body) {
    const item = sample.querySelector(".item"), first = written.get(sample);
    const question = body.new_question != null ? body.new_question : first.question;
    const options = body.new_options || first.options;
    const answer = body.new_answer || first.answer;
    item.querySelector(".question").textContent = question;
    item.querySelectorAll(".option-text").forEach((span, i) => { span.textContent = options[i]; });
    sample.dataset.answer = answer;
    item.querySelectorAll(":scope > ol.options > li").forEach((li) => {
      const key = li.dataset.letter === answer;
      li.classList.toggle("key", key);
      const tag = li.querySelector(".tag");
      if (key && !tag) {
        const mark = document.createElement("span");
        mark.className = "tag"; mark.textContent = "key";
        li.append(" ", mark);
      } else if (!key && tag) tag.remove();
    });
  }

  function openForm(sample, name) {
    closeForms(sample);
    const form = sample.querySelector("form." + name);
    form.hidden = false;
    form.querySelector("select, textarea, input").focus();
  }

  document.querySelectorAll(".sample").forEach((sample) => {
    sample.addEventListener("focus", () => started.set(sample, started.get(sample) || Date.now()));
    sample.querySelector("form.reject").addEventListener("submit", (event) => {
      event.preventDefault();
      const form = event.target, other = form.other.value.trim();
      decide(sample, { decision: "reject", reason: other || form.reason.value }).then(() => focus(sample));
    });
    sample.querySelector("form.edit").addEventListener("submit", (event) => {
      event.preventDefault();
      const form = event.target;
      const options = Array.from(form.querySelectorAll("input[name=option]")).map((i) => i.value);
      const body = { decision: "edit", new_question: form.question.value, new_options: options };
      // a twin written again after its English item's key changed takes the item's new key
      const key = sample.dataset.outdated;
      if (key && key !== sample.dataset.answer) body.new_answer = key;
      decide(sample, body).then(() => focus(sample));
    });
    sample.querySelector("form.move").addEventListener("submit", (event) => {
      event.preventDefault();
      decide(sample, { decision: "move", new_dimension: event.target.dimension.value }).then(() => focus(sample));
    });
    const rewrite = sample.querySelector("button.rewrite");  // a twin older than its item's change
    if (rewrite) rewrite.addEventListener("click", () => openForm(sample, "edit"));
    sample.querySelectorAll("form.reject select, form.move select").forEach((field) => {
      field.addEventListener("keydown", (event) => {
        if (event.key === "Enter") { event.preventDefault(); field.form.requestSubmit(); }
      });
    });
    sample.querySelectorAll("form.edit textarea, form.edit input").forEach((field) => {
      field.addEventListener("keydown", (event) => {
        if (event.key === "Enter" && event.ctrlKey) { event.preventDefault(); sample.querySelector("form.edit").requestSubmit(); }
      });
    });
  });

  document.addEventListener("keydown", (event) => {
    if (desk && desk.isOpen()) return;  // the zoom view has its own keys
    const sample = current();
    if (!sample) return;
    const inForm = event.target.closest && event.target.closest("form");
    if (event.key === "Escape") { closeForms(sample); focus(sample); return; }
    if (inForm || event.ctrlKey || event.metaKey || event.altKey) return;
    if (waitingLetter) {
      const letter = event.key.toUpperCase(), target = waitingLetter;
      waitingLetter = null;
      event.preventDefault();
      if (/^[A-J]$/.test(letter)) decide(target, { decision: "fix_answer", new_answer: letter });
      return;
    }
    const twin = sample.dataset.twin;
    if (twin && (event.key === "f" || event.key === "m")) {  // the English item's decisions
      event.preventDefault();
      sample.querySelector(".message").textContent = "a " + twin + " twin keeps its English item's key and dimension: accept, reject or edit its text";
      return;
    }
    const keys = {
      j: () => move(1), k: () => move(-1),
      a: () => decide(sample, { decision: "accept" }),
      r: () => openForm(sample, "reject"), e: () => openForm(sample, "edit"), m: () => openForm(sample, "move"),
      f: () => { waitingLetter = sample; sample.querySelector(".message").textContent = "fix the answer: press its letter"; },
      o: () => desk && desk.toggleOverlay(sample),
      z: () => desk && desk.zoom(sample),
      p: () => playStretch(sample),
    };
    if (keys[event.key]) { event.preventDefault(); keys[event.key](); }
  });

  // A question on a video: play the stretch it asks about, from its start, and stop at its end.
  function playStretch(sample) {
    const clip = sample.querySelector("video.clip");
    if (!clip) return;
    const start = parseFloat(clip.dataset.start), end = parseFloat(clip.dataset.end);
    clip.currentTime = start;
    const stop = () => { if (clip.currentTime >= end) { clip.pause(); clip.removeEventListener("timeupdate", stop); } };
    clip.addEventListener("timeupdate", stop);
    clip.play().catch(() => {});
  }

  function filter() {
    const flagged = document.getElementById("only-flagged").checked;
    const undecided = document.getElementById("only-undecided").checked;
    document.querySelectorAll(".sample").forEach((s) => {
      s.hidden = (flagged && !s.classList.contains("flagged")) || (undecided && s.classList.contains("decided") && s !== document.activeElement);
    });
  }
  document.getElementById("only-flagged").addEventListener("change", filter);
  document.getElementById("only-undecided").addEventListener("change", filter);
  const shown = samples();
  focus(window.location.hash === "#last" ? shown[shown.length - 1] : shown[0]);
})();
