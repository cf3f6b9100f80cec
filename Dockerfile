FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -o /kwhouse ./cmd/kwhouse

FROM gcr.io/distroless/static-debian12
COPY --from=build /kwhouse /kwhouse
EXPOSE 8080
ENTRYPOINT ["/kwhouse", "serve"]
