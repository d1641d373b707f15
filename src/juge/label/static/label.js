// Keyboard labelling: one key per label (data-key on each button), e opens the note box, u undoes.
// Keys are ignored while typing in a text field; Esc leaves the note box.
(function () {
  "use strict";
  var note = document.getElementById("explanation");
  var toggle = document.getElementById("explain-toggle");
  var busy = false;

  // Focus the page's [autofocus] control now: the browser applies autofocus only at a later
  // rendering update, which can come after the load event on a busy machine, and Enter pressed
  // on "Sign in" in between reached no button and did nothing. This deferred script runs before load.
  var autofocus = document.querySelector("[autofocus]");
  if (autofocus && (!document.activeElement || document.activeElement === document.body)) autofocus.focus();

  function openNote() {
    if (!note) return;
    note.hidden = false;
    note.focus();
  }
  if (toggle) toggle.addEventListener("click", openNote);

  function press(button) {
    if (busy) return;  // one label per page: a held key must not submit twice
    busy = true;
    if (button.form && typeof button.form.requestSubmit === "function") {
      button.form.requestSubmit(button);
    } else {
      button.click();
    }
  }

  // Each form is sent once: a double click (on Undo above all, where a second request would
  // undo the label before) is dropped here. The buttons are disabled a tick later, not in this
  // handler, because a disabled submitter would leave its choice out of the request.
  document.addEventListener("submit", function (event) {
    var form = event.target;
    if (form.getAttribute("data-sent")) { event.preventDefault(); return; }
    form.setAttribute("data-sent", "1");
    setTimeout(function () {
      var buttons = form.querySelectorAll("button");
      for (var i = 0; i < buttons.length; i++) buttons[i].disabled = true;
    }, 0);
  });
  // The second click of a double click can land on the next page when it loads fast, and undo
  // (or label) once more there. The browser counts the clicks of a double click (event.detail) across
  // pages, so that click arrives with a detail of 2 or more on a page that never saw the first click
  // of its run: it is dropped. Every click with a detail of 1 counts, however soon after the page
  // appears (no timing window, so a slow machine neither drops a first click nor lets an echo
  // through). Keyboard presses (detail 0) are guarded by `busy` and event.repeat instead.
  var sawFirstClick = false;
  document.addEventListener("mousedown", function (event) {
    if (event.detail === 1) sawFirstClick = true;
  }, true);
  document.addEventListener("click", function (event) {
    var button = event.target.closest && event.target.closest("button[type=submit]");
    if (!button || event.detail < 2 || sawFirstClick) return;
    event.preventDefault();
  }, true);

  // A page restored from the back/forward cache is a fresh page: let its forms be sent again.
  window.addEventListener("pageshow", function (event) {
    if (!event.persisted) return;
    busy = false;
    sawFirstClick = false;
    var forms = document.querySelectorAll("form[data-sent]");
    for (var i = 0; i < forms.length; i++) {
      forms[i].removeAttribute("data-sent");
      var buttons = forms[i].querySelectorAll("button");
      for (var j = 0; j < buttons.length; j++) buttons[j].disabled = false;
    }
  });

  document.addEventListener("keydown", function (event) {
    var target = event.target;
    var typing = target && (target.tagName === "TEXTAREA" || target.tagName === "INPUT" || target.tagName === "SELECT");
    if (typing) {
      if (event.key === "Escape") target.blur();
      return;
    }
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    if (event.repeat) return;  // a held key labels one item, not the next ones as the pages load
    var key = event.key.toLowerCase();
    if (key === "e" && note) { event.preventDefault(); openNote(); return; }
    var buttons = document.querySelectorAll("button[data-key]");
    for (var i = 0; i < buttons.length; i++) {
      if (buttons[i].getAttribute("data-key") === key && buttons[i].type === "submit") {
        event.preventDefault();
        press(buttons[i]);
        return;
      }
    }
  });
})();
