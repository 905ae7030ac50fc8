// The adjudicator's queue: conflicts the longest waiting first, each reviewer's decision side by
// side, the evidence overlay shown; a number key takes that reviewer's decision, n writes a new one; each is saved through
// POST /api/reviews with adjudication: true, and the next unsettled conflict gets the focus.
// o and z call the desk (desk.js). Text from data is only ever set with textContent.
(function () {
  "use strict";
  const desk = window.BenchDesk;
  const queue = document.getElementById("conflicts");
  if (!queue) return;
  const adjudicator = queue.dataset.me;  // the signed-in user: the server records them
  const left = document.getElementById("left");
  const VERDICT = ["decision", "new_answer", "new_question", "new_options", "new_dimension", "reason", "note"];

  const conflicts = () => Array.from(queue.querySelectorAll(".conflict"));
  const unsettled = () => conflicts().filter((c) => !c.classList.contains("settled"));
  function current() {
    const focused = document.activeElement && document.activeElement.closest(".conflict");
    return focused || unsettled()[0] || conflicts()[0];
  }
  const opened = new WeakSet();
  function focus(conflict) {  // the first time a conflict gets the focus, its overlay is shown
    if (!conflict) return;
    conflict.focus();
    if (desk && !opened.has(conflict)) { opened.add(conflict); desk.toggleOverlay(conflict, true); }
  }
  function move(step) {
    const list = conflicts(), index = list.indexOf(current());
    focus(list[Math.max(0, Math.min(list.length - 1, index + step))]);
  }
  function closeForm(conflict) { conflict.querySelector("form.adjudicate").hidden = true; }

  async function settle(conflict, verdict, chosen) {
    const message = conflict.querySelector(".message");
    const body = { question_id: conflict.dataset.question, adjudication: true };
    VERDICT.forEach((key) => { if (verdict[key] !== undefined && verdict[key] !== null && verdict[key] !== "") body[key] = verdict[key]; });
    message.textContent = "saving...";
    const response = await fetch("/api/reviews", {
      method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body),
    });
    const result = await response.json();
    if (!response.ok) { message.textContent = result.error; return false; }
    message.textContent = "";
    closeForm(conflict);
    conflict.querySelectorAll(".decision").forEach((d) => d.classList.toggle("chosen", d === chosen));
    let text = "settled by " + adjudicator + ": " + body.decision;
    if (body.new_answer) text += " answer " + body.new_answer;
    if (body.new_dimension) text += " to " + body.new_dimension;
    if (body.reason) text += " (" + body.reason + ")";
    const line = conflict.querySelector(".current");
    line.textContent = "";
    const b = document.createElement("b");
    b.textContent = text;
    line.appendChild(b);
    if (!conflict.classList.contains("settled")) {
      conflict.classList.add("settled");
      const count = unsettled().length;
      left.dataset.left = String(count);
      left.textContent = count + (count === 1 ? " conflict left" : " conflicts left");
    }
    const next = unsettled().find((c) => conflicts().indexOf(c) > conflicts().indexOf(conflict)) || unsettled()[0];
    focus(next || conflict);
    return true;
  }

  function take(conflict, number) {
    const chosen = conflict.querySelectorAll(".decision")[number - 1];
    if (!chosen) return;
    settle(conflict, JSON.parse(chosen.dataset.decision), chosen);
  }

  function openForm(conflict) {
    const form = conflict.querySelector("form.adjudicate");
    form.hidden = false;
    form.querySelector("select").focus();
  }

  conflicts().forEach((conflict) => {
    const form = conflict.querySelector("form.adjudicate");
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      const verdict = { decision: form.decision.value };
      if (form.answer.value) verdict.new_answer = form.answer.value;
      if (form.dimension.value) verdict.new_dimension = form.dimension.value;
      if (form.reason.value.trim()) verdict.reason = form.reason.value.trim();
      if (form.question.value.trim()) verdict.new_question = form.question.value.trim();
      settle(conflict, verdict, null);
    });
    form.querySelectorAll("select, input").forEach((field) => {
      field.addEventListener("keydown", (event) => {
        if (event.key === "Enter") { event.preventDefault(); form.requestSubmit(); }
      });
    });
    conflict.querySelectorAll(".decision").forEach((d, i) => {
      d.addEventListener("click", () => take(conflict, i + 1));
    });
  });

  document.addEventListener("keydown", (event) => {
    if (desk && desk.isOpen()) return;  // the zoom view has its own keys
    const conflict = current();
    if (!conflict) return;
    const inField = event.target.closest && event.target.closest("form, input, textarea, select");
    if (event.key === "Escape") { closeForm(conflict); focus(conflict); return; }
    if (inField || event.ctrlKey || event.metaKey || event.altKey) return;
    if (/^[1-9]$/.test(event.key)) { event.preventDefault(); take(conflict, Number(event.key)); return; }
    const keys = {
      j: () => move(1), k: () => move(-1), n: () => openForm(conflict),
      o: () => desk && desk.toggleOverlay(conflict), z: () => desk && desk.zoom(conflict),
    };
    if (keys[event.key]) { event.preventDefault(); keys[event.key](); }
  });

  focus(unsettled()[0]);
})();
