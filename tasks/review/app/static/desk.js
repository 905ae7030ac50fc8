// The desk's image tools, shared by the batch pages and the adjudicator's queue: the evidence
// overlay (an SVG layer whose viewBox is the original image's size, so a box lands on its pixels
// at any displayed size) and the zoom view (a larger image with pan). Pages show thumbnails; the
// full image is loaded for the overlay and the zoom. Shapes come from the figure's data-shapes;
// every label is set with textContent. The page's script calls window.BenchDesk from its keys.
(function () {
  "use strict";
  const SVG = "http://www.w3.org/2000/svg";
  const sizes = new Map();  // full image URL -> a promise of its natural size

  function figureOf(target) {
    if (!target) return null;
    if (target.matches && target.matches("figure.evidence")) return target;
    return target.querySelector ? target.querySelector("figure.evidence") : null;
  }
  function shapesOf(figure) {
    try { return JSON.parse(figure.dataset.shapes || "[]"); } catch (error) { return []; }
  }
  function naturalSize(url) {
    if (!sizes.has(url)) {
      sizes.set(url, new Promise((resolve, reject) => {
        const probe = new Image();
        probe.addEventListener("load", () => resolve({ width: probe.naturalWidth, height: probe.naturalHeight }));
        probe.addEventListener("error", () => { sizes.delete(url); reject(new Error("the image did not load")); });
        probe.src = url;
      }));
    }
    return sizes.get(url);
  }

  function svgElement(name, attributes) {
    const element = document.createElementNS(SVG, name);
    Object.entries(attributes || {}).forEach(([key, value]) => element.setAttribute(key, String(value)));
    return element;
  }

  // Draw the shapes into `svg` in the image's own pixels: context first, cited on top with labels.
  function draw(svg, shapes, width, height) {
    while (svg.firstChild) svg.removeChild(svg.firstChild);
    svg.setAttribute("viewBox", "0 0 " + width + " " + height);
    svg.setAttribute("preserveAspectRatio", "none");
    const font = Math.max(6, Math.round(Math.min(width, height) / 28));
    const cited = shapes.filter((s) => s.cited);
    const ordered = shapes.filter((s) => !s.cited).concat(cited);
    const numbered = cited.length > 2;  // a count: number what is counted
    ordered.forEach((shape) => {
      const [x0, y0, x1, y1] = shape.box.map(Number);
      if (![x0, y0, x1, y1].every(Number.isFinite)) return;
      const group = svgElement("g", { class: "shape " + shape.kind + (shape.cited ? " cited" : " context") });
      const rect = svgElement("rect", { x: x0, y: y0, width: Math.max(0, x1 - x0), height: Math.max(0, y1 - y0) });
      const title = svgElement("title");
      title.textContent = (shape.cited ? "cited: " : "") + shape.label;
      rect.appendChild(title);
      group.appendChild(rect);
      if (shape.cited) {
        const label = svgElement("text", { x: x0 + 1, y: y0 >= font + 2 ? y0 - 3 : y1 + font, "font-size": font });
        label.textContent = (numbered ? (cited.indexOf(shape) + 1) + ". " : "") + shape.label;
        group.appendChild(label);
      }
      svg.appendChild(group);
    });
  }

  function failed(figure, error) {  // say so under the image, never fail silently
    const note = figure.querySelector(".boxes");
    if (note) note.textContent = error.message;
    return false;
  }

  function overlayLayer(container) {
    let svg = container.querySelector(":scope > svg.overlay");
    if (!svg) {
      svg = svgElement("svg", { class: "overlay", "aria-hidden": "true" });
      container.appendChild(svg);
    }
    return svg;
  }

  // Show or hide a figure's overlay (on: load the full image, then draw); returns the new state.
  async function toggleOverlay(target, wanted) {
    const figure = figureOf(target);
    if (!figure) return false;
    const button = figure.querySelector(".toggle-overlay");
    const on = wanted === undefined ? !figure.classList.contains("overlay-on") : wanted;
    figure.classList.toggle("overlay-on", on);
    if (button) button.setAttribute("aria-pressed", String(on));
    if (!on) return false;
    const shot = figure.querySelector("img.shot");
    let size;
    try { size = await naturalSize(shot.dataset.full); } catch (error) { return failed(figure, error); }
    if (shot.getAttribute("src") !== shot.dataset.full) shot.src = shot.dataset.full;
    draw(overlayLayer(figure.querySelector(".frame")), shapesOf(figure), size.width, size.height);
    figure.dataset.drawn = String(figure.querySelectorAll("svg.overlay rect").length);
    return true;
  }

  // --- the zoom view ---------------------------------------------------------------------------
  const dialog = document.getElementById("zoom");
  let zoomed = null, scale = 1, fit = 1, natural = { width: 1, height: 1 };
  const viewport = dialog && dialog.querySelector(".zoom-viewport");
  const canvas = dialog && dialog.querySelector(".zoom-canvas");
  const zoomImage = dialog && dialog.querySelector(".zoom-image");
  const level = dialog && dialog.querySelector(".zoom-level");
  const overlayButton = dialog && dialog.querySelector('[data-zoom="overlay"]');

  function setScale(next) {
    const centre = {
      x: (viewport.scrollLeft + viewport.clientWidth / 2) / Math.max(1, canvas.offsetWidth),
      y: (viewport.scrollTop + viewport.clientHeight / 2) / Math.max(1, canvas.offsetHeight),
    };
    scale = Math.min(Math.max(next, fit / 4, 0.02), Math.max(fit, 1) * 16);
    canvas.style.width = Math.round(natural.width * scale) + "px";
    canvas.style.height = Math.round(natural.height * scale) + "px";
    viewport.scrollLeft = centre.x * canvas.offsetWidth - viewport.clientWidth / 2;
    viewport.scrollTop = centre.y * canvas.offsetHeight - viewport.clientHeight / 2;
    level.textContent = Math.round(scale * 100) + "% of the original size";
    dialog.dataset.scale = String(scale);
  }
  function showZoomOverlay(on) {
    canvas.classList.toggle("overlay-on", on);
    overlayButton.setAttribute("aria-pressed", String(on));
  }

  async function zoom(target) {
    const figure = figureOf(target);
    if (!figure || !dialog) return;
    zoomed = figure;
    const url = figure.querySelector("img.shot").dataset.full;
    if (!dialog.open) dialog.showModal();
    try { natural = await naturalSize(url); } catch (error) { closeZoom(); return failed(figure, error); }
    zoomImage.src = url;
    draw(overlayLayer(canvas), shapesOf(figure), natural.width, natural.height);
    showZoomOverlay(figure.classList.contains("overlay-on"));
    fit = Math.min(viewport.clientWidth / natural.width, viewport.clientHeight / natural.height) || 1;
    setScale(fit);
    viewport.focus();
  }
  function closeZoom() { if (dialog && dialog.open) dialog.close(); }

  if (dialog) {
    const actions = {
      in: () => setScale(scale * 1.5),
      out: () => setScale(scale / 1.5),
      fit: () => setScale(fit),
      overlay: () => {
        const on = !canvas.classList.contains("overlay-on");
        showZoomOverlay(on);
        if (zoomed) toggleOverlay(zoomed, on);
      },
      close: closeZoom,
    };
    dialog.querySelectorAll("[data-zoom]").forEach((button) => {
      button.addEventListener("click", () => { actions[button.dataset.zoom](); viewport.focus(); });
    });
    dialog.addEventListener("keydown", (event) => {
      const step = { ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowUp: [0, -1], ArrowDown: [0, 1] }[event.key];
      const keys = { "+": "in", "=": "in", "-": "out", "0": "fit", o: "overlay", z: "close" };
      if (step) {
        viewport.scrollBy(step[0] * viewport.clientWidth * 0.2, step[1] * viewport.clientHeight * 0.2);
      } else if (keys[event.key] && !event.ctrlKey && !event.metaKey && !event.altKey) {
        actions[keys[event.key]]();
      } else {
        return;
      }
      event.preventDefault();
      event.stopPropagation();
    });
    let drag = null;
    viewport.addEventListener("pointerdown", (event) => {
      drag = { x: event.clientX, y: event.clientY, left: viewport.scrollLeft, top: viewport.scrollTop };
      viewport.setPointerCapture(event.pointerId);
      viewport.classList.add("dragging");
    });
    viewport.addEventListener("pointermove", (event) => {
      if (!drag) return;
      viewport.scrollLeft = drag.left - (event.clientX - drag.x);
      viewport.scrollTop = drag.top - (event.clientY - drag.y);
    });
    const release = () => { drag = null; viewport.classList.remove("dragging"); };
    viewport.addEventListener("pointerup", release);
    viewport.addEventListener("pointercancel", release);
    viewport.addEventListener("wheel", (event) => {
      if (!event.ctrlKey) return;  // a plain wheel scrolls (pans); with Ctrl it zooms
      event.preventDefault();
      setScale(event.deltaY < 0 ? scale * 1.25 : scale / 1.25);
    }, { passive: false });
    dialog.addEventListener("close", () => {
      // The browser fires "close" as a task of its own, and keys are handled first: a reviewer
      // who pressed Escape and then j is already on the next sample, and stays there.
      const sample = zoomed && zoomed.closest(".sample");
      const active = document.activeElement;
      if (sample && !(active && active.closest && active.closest(".sample"))) sample.focus();
    });
  }

  document.querySelectorAll("figure.evidence").forEach((figure) => {
    const toggle = figure.querySelector(".toggle-overlay");
    if (toggle) toggle.addEventListener("click", () => toggleOverlay(figure));
    const open = figure.querySelector(".open-zoom");
    if (open) open.addEventListener("click", () => zoom(figure));
    figure.querySelector("img.shot").addEventListener("click", () => zoom(figure));
  });

  window.BenchDesk = {
    toggleOverlay: toggleOverlay,
    zoom: zoom,
    isOpen: () => Boolean(dialog && dialog.open),
  };
})();
