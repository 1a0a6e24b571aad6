// memloop ui: every form that changes the store asks first (data-confirm holds the question).
document.addEventListener("submit", (event) => {
  const question = event.target.getAttribute("data-confirm");
  if (question && !window.confirm(question)) {
    event.preventDefault();
  }
});
